package notedb

import (
	"context"
	"fmt"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
)

// embeddedQuery reads the renders a page embeds in one statement. The inner query sizes
// the candidates by their stored html_bytes and keeps a running sum, smallest first (by
// cuid among equals); the outer one reads html, by a lookup on the primary key, of the
// rows within the allowance only, so that a render past it is never read (a SQLite
// window over html itself would copy every candidate's render into its sorter).
const embeddedQuery = `SELECT w.cuid, w.title, w.path, w.render_links, w.render_outline, w.etag, w.render_id, w.expires_at,
	CASE WHEN w.upto <= ? THEN (SELECT p.html FROM publications p WHERE p.cuid = w.cuid) END AS html
FROM (SELECT cuid, title, path, render_links, render_outline, etag, render_id, expires_at,
	SUM(html_bytes) OVER (ORDER BY html_bytes, cuid) AS upto
	FROM publications WHERE cuid IN ? AND account_cuid = ? AND NOT unpublished) w`

// Embedded implements note.ReadStore: one statement by primary key, the account and the
// state checked on the rows (expiry in Go, as both databases agree on it there). The HTML
// is read only of the smallest renders that fit maxBytes together, sized by their stored
// length (html_bytes) without reading them; the others come without it (Over).
func (s *Reads) Embedded(ctx context.Context, accountCUID string, cuids []string, now time.Time, maxBytes int) ([]note.Embedded, error) {
	var rows []struct {
		CUID          string `gorm:"column:cuid"`
		Title, Path   *string
		HTML          *string `gorm:"column:html"`
		RenderLinks   string  `gorm:"column:render_links"`
		RenderOutline string
		ETag          string `gorm:"column:etag"`
		RenderID      string `gorm:"column:render_id"`
		ExpiresAt     *time.Time
	}
	if err := s.db.WithContext(ctx).Raw(embeddedQuery, maxBytes, cuids, accountCUID).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("read embedded renders: %w", db.Classify(err))
	}
	out := make([]note.Embedded, 0, len(rows))
	for _, r := range rows {
		if r.ExpiresAt != nil && !now.Before(*r.ExpiresAt) {
			continue
		}
		e := note.Embedded{CUID: r.CUID, Title: r.Title, Path: r.Path, Outline: r.RenderOutline, ETag: r.ETag,
			RenderID: r.RenderID, ExpiresAt: utc(r.ExpiresAt), Over: r.HTML == nil}
		if r.HTML != nil {
			e.HTML = *r.HTML
		}
		links, err := decodeLinks(r.RenderLinks)
		if err != nil {
			return nil, fmt.Errorf("read embedded renders: %w", err)
		}
		e.Links = links
		out = append(out, e)
	}
	return out, nil
}
