package notedb

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
)

var _ note.ReapStore = (*Store)(nil)

// ClaimReleased implements note.ReapStore: each call is one transaction that claims its
// rows by deleting them (DELETE … RETURNING) and calls remove, which deletes their
// objects, before it commits. On Postgres, SKIP LOCKED makes concurrent reapers take
// disjoint batches; on SQLite the first statement takes the write lock, so reapers run
// one after the other and each sees what the previous one left.
func (s *Store) ClaimReleased(ctx context.Context, batch int, remove func([]note.ReleasedImage) error) ([]note.ReleasedImage, error) {
	skipLocked := ""
	if db.Dialect(s.db) == db.Postgres {
		skipLocked = " FOR UPDATE SKIP LOCKED"
	}
	var (
		images    []note.ReleasedImage
		removeErr error
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rows []struct {
			BlobKey string
			Size    int64
		}
		if err := tx.Raw("DELETE FROM images WHERE id IN (SELECT id FROM images WHERE released ORDER BY id LIMIT ?"+skipLocked+
			") RETURNING blob_key, size", batch).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		images = make([]note.ReleasedImage, len(rows))
		for i, r := range rows {
			images[i] = note.ReleasedImage{BlobKey: r.BlobKey, Size: r.Size}
		}
		removeErr = remove(images)
		return removeErr
	})
	if removeErr != nil {
		return nil, removeErr
	}
	if err != nil {
		return nil, db.Classify(err)
	}
	return images, nil
}

// ReleaseExpiredReservations implements note.ReapStore.
func (s *Store) ReleaseExpiredReservations(ctx context.Context, now time.Time, batch int) ([]note.Reservation, error) {
	skipLocked := ""
	if db.Dialect(s.db) == db.Postgres {
		skipLocked = " FOR UPDATE SKIP LOCKED"
	}
	var rs []reservation
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		rs, err = release(tx, "id IN (SELECT id FROM image_reservations WHERE expires_ms <= ? ORDER BY expires_ms LIMIT ?"+
			skipLocked+")", now.UnixMilli(), batch)
		return err
	})
	if err != nil {
		return nil, db.Classify(err)
	}
	out := make([]note.Reservation, len(rs))
	for i, r := range rs {
		out[i] = note.Reservation{Account: r.AccountCUID, Note: r.NoteCUID}
	}
	return out, nil
}

// Named implements note.ReapStore, in one query.
func (s *Store) Named(ctx context.Context, keys, notes []string) ([]string, error) {
	var named []string
	if err := s.db.WithContext(ctx).Raw("SELECT blob_key FROM images WHERE blob_key IN ? "+
		"UNION SELECT note_cuid FROM image_reservations WHERE note_cuid IN ?", keys, notes).Scan(&named).Error; err != nil {
		return nil, db.Classify(err)
	}
	return named, nil
}

// PurgeUnpublished implements note.ReapStore (note.Reaper.PurgeUnpublished says why the
// rows are deleted, and when). A publication that an image row still names (Reap has not
// deleted all its images yet) is left for a later run, so that no image row points at a
// deleted publication.
//
// The unpublished publications without images are visited in cuid order, at most batch
// per transaction, until all were seen or maxBatches batches ran (0: no bound).
// Unpublishing sets updated_at, and the comparison with cutoff is made in Go, because
// SQLite cannot compare its timestamps in SQL (see libs/db). On Postgres, SKIP LOCKED makes concurrent purges
// take disjoint rows; on SQLite the single writer orders them.
func (s *Store) PurgeUnpublished(ctx context.Context, cutoff time.Time, batch, maxBatches int) (note.Purged, error) {
	var total note.Purged
	after := ""
	for maxBatches == 0 || total.Batches < maxBatches {
		var (
			seen []struct {
				CUID      string `gorm:"column:cuid"`
				UpdatedAt time.Time
			}
			notes, versions int64
		)
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			q := tx.Model(&publicationRow{}).Select("cuid, updated_at").
				Where("unpublished AND cuid > ? AND NOT EXISTS (SELECT 1 FROM images i WHERE i.publication_cuid = publications.cuid)", after).
				Order("cuid").Limit(batch)
			if db.Dialect(tx) == db.Postgres {
				q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
			}
			if err := q.Find(&seen).Error; err != nil {
				return err
			}
			var due []string
			for _, p := range seen {
				if !p.UpdatedAt.After(cutoff) {
					due = append(due, p.CUID)
				}
			}
			if len(due) == 0 {
				return nil
			}
			res := tx.Where("publication_cuid IN ?", due).Delete(&versionRow{})
			if res.Error != nil {
				return res.Error
			}
			versions = res.RowsAffected
			res = tx.Where("cuid IN ? AND unpublished", due).Delete(&publicationRow{})
			notes = res.RowsAffected
			return res.Error
		})
		if err != nil {
			return total, db.Classify(err)
		}
		if len(seen) == 0 {
			return total, nil
		}
		total.Batches++
		total.Notes += notes
		total.Versions += versions
		if len(seen) < batch {
			return total, nil
		}
		after = seen[len(seen)-1].CUID
	}
	return total, nil
}
