package notedb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
)

// pageStateQuery reads a page's sources in one statement, three kinds of row in one
// shape (part): 0 a publication (cuid, etag, render id, outline, expiry), 1 a link index
// row (publication, key, path, created_ms, kind, expiry), 2 the owner's settings
// (name, theme, accent colour, font, show_author, indexable). %s are the dialect's
// membership tests of the cuids and of the keys.
const pageStateQuery = `SELECT 0 AS part, p.cuid AS id, p.etag AS a, p.render_id AS b, p.render_outline AS c,
	0 AS n, 0 AS k, p.expires_at AS t
	FROM publications p WHERE p.account_cuid = ? AND p.cuid %s AND NOT p.unpublished
UNION ALL
SELECT 1, m.publication_cuid, m.key, COALESCE(m.path, ''), '', m.created_ms, m.kind, m.expires_at
	FROM note_names m WHERE m.account_cuid = ? AND m.key %s
UNION ALL
SELECT 2, a.display_name, a.theme, a.accent_color, a.font,
	CASE WHEN a.show_author THEN 1 ELSE 0 END, CASE WHEN a.indexable THEN 1 ELSE 0 END, NULL
	FROM accounts a WHERE a.cuid = ?`

// PageState implements note.ReadStore.
func (s *Reads) PageState(ctx context.Context, accountCUID string, cuids, keys []string, now time.Time) (note.PageState, error) {
	var rows *sql.Rows
	var err error
	if s.db.Dialector.Name() == "postgres" {
		rows, err = s.db.WithContext(ctx).Raw(fmt.Sprintf(pageStateQuery, "= ANY(?::text[])", "= ANY(?::text[])"),
			accountCUID, textArray(cuids), accountCUID, textArray(keys), accountCUID).Rows()
	} else {
		rows, err = s.db.WithContext(ctx).Raw(fmt.Sprintf(pageStateQuery, "IN ?", "IN ?"),
			accountCUID, cuids, accountCUID, keys, accountCUID).Rows()
	}
	if err != nil {
		return note.PageState{}, fmt.Errorf("read a page's sources: %w", db.Classify(err))
	}
	defer rows.Close()
	var st note.PageState
	for rows.Next() {
		var part int
		var id, a, b, c string
		var n, k int64
		var t sql.NullTime
		if err := rows.Scan(&part, &id, &a, &b, &c, &n, &k, &t); err != nil {
			return note.PageState{}, fmt.Errorf("read a page's sources: %w", db.Classify(err))
		}
		var expires *time.Time
		if t.Valid {
			expires = utc(&t.Time)
		}
		switch part {
		case 0:
			st.Notes = append(st.Notes, note.NoteState{CUID: id, ETag: a, RenderID: b, Outline: c, ExpiresAt: expires})
		case 1:
			if expires == nil || now.Before(*expires) {
				st.Names = append(st.Names, note.NameHit{Name: note.Name{Kind: note.NameKind(k), Key: a}, CUID: id, Path: b,
					CreatedAt: time.UnixMilli(n).UTC(), ExpiresAt: expires})
			}
		default:
			st.Owner.Name, st.Owner.Theme, st.Owner.AccentColor, st.Owner.Font = id, a, b, c
			st.Owner.ShowAuthor, st.Owner.Indexable = n == 1, k == 1
		}
	}
	return st, db.Classify(rows.Err())
}
