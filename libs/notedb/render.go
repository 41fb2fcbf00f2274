package notedb

import (
	"context"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
)

// SaveRender implements note.RenderStore: a new render (one that replaces prev) writes
// its change in the same transaction.
func (s *Store) SaveRender(ctx context.Context, p note.Publication, prev string, change note.Change) error {
	row, err := toRow(p)
	if err != nil {
		return err
	}
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&publicationRow{}).
			Where("cuid = ? AND etag = ? AND render_id = ? AND render_version <= ?", p.CUID, p.ETag, prev, p.RenderVersion).
			Updates(map[string]any{"html": row.HTML, "html_bytes": row.HTMLBytes, "render_version": row.RenderVersion, "render_id": row.RenderID, "render_links": row.RenderLinks, "render_outline": row.RenderOutline,
				"render_tries": row.RenderTries, "render_misses": row.RenderMisses, "render_retry_ms": row.RenderRetryMS})
		if res.Error != nil || res.RowsAffected == 0 || p.RenderID == prev {
			return res.Error
		}
		if err := writeLinks(tx, p); err != nil {
			return err
		}
		return s.outbox.Write(tx, change)
	}))
}

// ClaimRenders implements note.RenderStore. One statement claims: on Postgres, a second
// process's UPDATE of a row claimed meanwhile waits for the first and re-checks the
// retry time on the row it then sees, so it skips the row; SQLite has one writer.
func (s *Store) ClaimRenders(ctx context.Context, version int, now, until time.Time, limit int) ([]string, error) {
	var cuids []string
	err := s.db.WithContext(ctx).Raw("UPDATE publications SET render_retry_ms = ? "+
		"WHERE render_version < ? AND render_retry_ms <= ? AND NOT unpublished AND cuid IN "+
		"(SELECT cuid FROM publications WHERE render_version < ? AND render_retry_ms <= ? AND NOT unpublished LIMIT ?) RETURNING cuid",
		until.UnixMilli(), version, now.UnixMilli(), version, now.UnixMilli(), limit).Scan(&cuids).Error
	return cuids, db.Classify(err)
}
