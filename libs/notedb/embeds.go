package notedb

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
)

// Embedded implements note.Storer: one query by primary key, the account and the state
// checked on the rows (expiry in Go, as both databases agree on it there). The HTML is
// read only of the smallest renders that fit maxBytes together (their sizes known
// without reading them: Postgres keeps the length of a TOASTed value beside it).
func (s *Store) Embedded(ctx context.Context, accountCUID string, cuids []string, now time.Time, maxBytes int) ([]note.Embedded, error) {
	var rows []struct {
		CUID          string `gorm:"column:cuid"`
		Title, Path   *string
		HTML          *string `gorm:"column:html"`
		RenderLinks   string  `gorm:"column:render_links"`
		RenderOutline string
		RenderID      string `gorm:"column:render_id"`
		ExpiresAt     *time.Time
	}
	size := "octet_length(html)"
	if s.db.Dialector.Name() != "postgres" {
		size = "length(CAST(html AS BLOB))"
	}
	err := s.db.WithContext(ctx).Model(&publicationRow{}).
		Select("cuid, title, path, render_links, render_outline, render_id, expires_at, "+
			"CASE WHEN SUM("+size+") OVER (ORDER BY "+size+", cuid) <= ? THEN html END AS html", maxBytes).
		Where("cuid IN ? AND account_cuid = ? AND NOT unpublished", cuids, accountCUID).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read embedded renders: %w", db.Classify(err))
	}
	out := make([]note.Embedded, 0, len(rows))
	for _, r := range rows {
		if r.HTML == nil || r.ExpiresAt != nil && !now.Before(*r.ExpiresAt) {
			continue
		}
		e := note.Embedded{CUID: r.CUID, Title: r.Title, Path: r.Path, HTML: *r.HTML, Outline: r.RenderOutline,
			RenderID: r.RenderID, ExpiresAt: utc(r.ExpiresAt)}
		if r.RenderLinks != "" {
			if err := json.Unmarshal([]byte(r.RenderLinks), &e.Links); err != nil {
				return nil, fmt.Errorf("read embedded renders: stored links: %w", err)
			}
		}
		out = append(out, e)
	}
	return out, nil
}
