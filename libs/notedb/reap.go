package notedb

import (
	"context"

	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/db"
)

// Reaped counts what one Reap call deleted.
type Reaped struct {
	Images  int
	Bytes   int64
	Batches int
}

// Reap deletes the bytes and rows of released images (those of unpublished notes), at
// most batch images per transaction, until none is left or maxBatches batches ran (0: no
// bound). Images of active and expired notes are never released, so never touched.
//
// Each batch claims its rows by deleting them (DELETE … RETURNING) and deletes their
// blobs in the same transaction: a crash between batches loses nothing and leaves no
// half-done batch. On Postgres, SKIP LOCKED makes concurrent reapers take disjoint
// batches; on SQLite the first statement takes the write lock, so reapers run one after
// the other and each sees what the previous one left.
func (s *Store) Reap(ctx context.Context, batch, maxBatches int) (Reaped, error) {
	var total Reaped
	skipLocked := ""
	if db.Dialect(s.db) == db.Postgres {
		skipLocked = " FOR UPDATE SKIP LOCKED"
	}
	for maxBatches == 0 || total.Batches < maxBatches {
		var rows []struct {
			BlobKey string
			Size    int64
		}
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Raw("DELETE FROM images WHERE id IN (SELECT id FROM images WHERE released ORDER BY id LIMIT ?"+skipLocked+
				") RETURNING blob_key, size", batch).Scan(&rows).Error; err != nil {
				return err
			}
			keys := make([]string, len(rows))
			for i, r := range rows {
				keys[i] = r.BlobKey
			}
			return s.blobs.Delete(ctx, tx, keys)
		})
		if err != nil {
			return total, db.Classify(err)
		}
		if len(rows) == 0 {
			return total, nil
		}
		total.Batches++
		total.Images += len(rows)
		for _, r := range rows {
			total.Bytes += r.Size
		}
	}
	return total, nil
}
