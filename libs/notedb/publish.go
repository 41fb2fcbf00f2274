package notedb

import (
	"context"
	"errors"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/edge"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
)

// Create implements note.Storer. A note without images is one batch (db.Batch): its row,
// its names in the link index and the edge's purge, in one round trip on Postgres. A
// path another publication holds is found by the unique index publications_path, and
// only then looked up, to name the holder. A note with images also settles their
// reservation, whose absence must undo the rest: a transaction.
func (s *Store) Create(ctx context.Context, p note.Publication, images []note.StoredImage, reservation string) error {
	row, err := toRow(p)
	if err != nil {
		return err
	}
	row.NextVersion = 1
	writes := []db.Write{func(tx *gorm.DB) *gorm.DB { return tx.Create(&row) }}
	if names := nameRows(p); len(names) > 0 {
		// A new note's reads were cached nowhere: only the pages its names may be
		// linked from are purged.
		writes = append(writes, func(tx *gorm.DB) *gorm.DB { return tx.Create(&names) })
		writes = append(writes, s.outbox.Writes(edge.Purge{Account: p.AccountCUID})...)
	}
	if len(images) > 0 {
		return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := checkPathFree(tx, p); err != nil {
				return err
			}
			if err := settle(tx, reservation); err != nil {
				return err
			}
			if err := db.Run(tx, writes...); err != nil {
				return err
			}
			return insertImages(tx, images)
		}))
	}
	err = db.Batch(ctx, s.db, writes...)
	var taken *note.PathTakenError
	if errors.Is(err, gorm.ErrDuplicatedKey) && p.Path != nil && errors.As(checkPathFree(s.db.WithContext(ctx), p), &taken) {
		return taken
	}
	return db.Classify(err)
}
