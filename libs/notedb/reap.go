package notedb

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/sharenote/sharenote/libs/blob"
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
// objects before it commits: when the store fails the rows stay for the next run, and a
// crash between the two leaves rows whose objects are gone, which the next run deletes
// again (deleting a missing object is no error). On Postgres, SKIP LOCKED makes concurrent reapers take disjoint
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
			return s.blobs.Delete(ctx, keys...)
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

// Orphans counts what ReleaseExpired or SweepOrphans deleted.
type Orphans struct {
	// Reservations are the expired reservations released.
	Reservations int
	// Objects are the objects that no image row names, deleted; Bytes, their size.
	Objects int
	Bytes   int64
}

// ReleaseExpired releases the reservations that expired at or before now (their upload
// died, or outlived note.UploadTimeout), at most batch per transaction, and deletes the
// objects stored under each (<account>/<note>/) that no image row names. A publish whose
// reservation is released can no longer commit (note.ErrUploadExpired), so nothing will
// name those objects.
func (s *Store) ReleaseExpired(ctx context.Context, now time.Time, batch int) (Orphans, error) {
	var total Orphans
	skipLocked := ""
	if db.Dialect(s.db) == db.Postgres {
		skipLocked = " FOR UPDATE SKIP LOCKED"
	}
	for {
		var rs []reservation
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			var err error
			rs, err = release(tx, "id IN (SELECT id FROM image_reservations WHERE expires_ms <= ? ORDER BY expires_ms LIMIT ?"+
				skipLocked+")", now.UnixMilli(), batch)
			return err
		})
		if err != nil {
			return total, db.Classify(err)
		}
		total.Reservations += len(rs)
		for _, r := range rs {
			if err := s.deleteOrphans(ctx, r.AccountCUID+"/"+r.NoteCUID+"/", time.Time{}, &total); err != nil {
				return total, err
			}
		}
		if len(rs) < batch {
			return total, nil
		}
	}
}

// SweepOrphans lists every object in the store and deletes those older than before
// that no image row names and no live reservation covers: objects an interrupted
// process left behind in a way ReleaseExpired does not see. It reads the whole listing,
// so it runs on demand (`sharenote reap --orphans`), not on every reap.
func (s *Store) SweepOrphans(ctx context.Context, before time.Time) (Orphans, error) {
	var total Orphans
	return total, s.deleteOrphans(ctx, "", before, &total)
}

// orphanBatch is how many listed objects one check against the image rows covers.
const orphanBatch = 500

// deleteOrphans deletes the objects under prefix, modified before before (zero: any),
// that no image row names and no reservation covers, adding them to total.
func (s *Store) deleteOrphans(ctx context.Context, prefix string, before time.Time, total *Orphans) error {
	var listed []blob.Info
	flush := func() error {
		if len(listed) == 0 {
			return nil
		}
		keys := make([]string, len(listed))
		notes := make([]string, len(listed))
		for i, o := range listed {
			keys[i] = o.Key
			if parts := strings.SplitN(o.Key, "/", 3); len(parts) == 3 {
				notes[i] = parts[1]
			}
		}
		var named []string
		if err := s.db.WithContext(ctx).Raw("SELECT blob_key FROM images WHERE blob_key IN ? "+
			"UNION SELECT note_cuid FROM image_reservations WHERE note_cuid IN ?", keys, notes).Scan(&named).Error; err != nil {
			return db.Classify(err)
		}
		kept := make(map[string]bool, len(named))
		for _, k := range named {
			kept[k] = true
		}
		var orphans []string
		var size int64
		for i, o := range listed {
			if !kept[o.Key] && !kept[notes[i]] {
				orphans = append(orphans, o.Key)
				size += o.Size
			}
		}
		if err := s.blobs.Delete(ctx, orphans...); err != nil {
			return err
		}
		total.Objects += len(orphans)
		total.Bytes += size
		listed = listed[:0]
		return nil
	}
	err := s.blobs.List(ctx, prefix, func(o blob.Info) error {
		if !before.IsZero() && !o.ModTime.Before(before) {
			return nil
		}
		listed = append(listed, o)
		if len(listed) == orphanBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// Purged counts what one PurgeUnpublished call deleted.
type Purged struct {
	// Notes are the publications deleted; Versions, their version snapshots.
	Notes    int64
	Versions int64
	// Batches are the transactions that looked at publications, up to batch each.
	Batches int
}

// PurgeUnpublished deletes the publications unpublished at or before cutoff, with their
// version snapshots: what their authors withdrew is not kept longer than the retention
// the operator chose (SHARE_UNPUBLISHED_RETENTION). The rows are deleted rather than
// emptied, because nothing needs them once unpublished: every read of an unpublished
// publication is already 404, unpublishing it again is 404, and the chance that a new
// publication draws a purged cuid (24 characters from a CSPRNG) is negligible. A
// publication some of whose images Reap has not deleted yet is left for a later run, so
// that no image row points at a deleted publication; run Reap first.
//
// The unpublished publications without images are visited in cuid order, at most batch
// per transaction, until all were seen or maxBatches batches ran (0: no bound).
// Unpublishing sets updated_at, and the comparison with cutoff is made in Go, because
// SQLite cannot compare its timestamps in SQL (see libs/db). On Postgres, SKIP LOCKED makes concurrent purges
// take disjoint rows; on SQLite the single writer orders them.
func (s *Store) PurgeUnpublished(ctx context.Context, cutoff time.Time, batch, maxBatches int) (Purged, error) {
	var total Purged
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
