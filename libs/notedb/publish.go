package notedb

import (
	"context"
	"errors"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
)

// Create implements note.PublishStore. A note without images is one batch (db.Batch): its row,
// its names in the link index and the edge's purge, in one round trip on Postgres. A note
// with images also settles their reservation, whose absence must undo the rest: a
// transaction. Either way, a path another publication holds is found by the unique index
// publications_path, also when two publishes race for it, and only then looked up, to
// name the holder.
func (s *Store) Create(ctx context.Context, p note.Publication, images []note.StoredImage, reservation string, change note.Change) error {
	row, err := toRow(p)
	if err != nil {
		return err
	}
	row.NextVersion = 1
	writes := append([]db.Write{func(tx *gorm.DB) *gorm.DB { return tx.Create(&row) }}, s.outbox.Writes(change)...)
	if names := nameRows(p); len(names) > 0 {
		writes = append(writes, func(tx *gorm.DB) *gorm.DB { return tx.Create(&names) })
	}
	if links := linkRows(p); len(links) > 0 {
		writes = append(writes, func(tx *gorm.DB) *gorm.DB { return tx.Create(&links) })
	}
	if len(images) > 0 {
		err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := settle(tx, reservation); err != nil {
				return err
			}
			if err := db.Run(tx, writes...); err != nil {
				return err
			}
			return insertImages(tx, images)
		})
	} else {
		err = db.Batch(ctx, s.db, writes...)
	}
	return s.pathTaken(ctx, err, p)
}

// pathTaken is err, classified, but for a unique violation by p's path, which becomes a
// *note.PathTakenError naming the holder. The unique index publications_path decides
// which of two writes racing for a path takes it; the other's transaction is then over,
// and the holder is looked up after it.
func (s *Store) pathTaken(ctx context.Context, err error, p note.Publication) error {
	var taken *note.PathTakenError
	if errors.Is(err, gorm.ErrDuplicatedKey) && p.Path != nil && errors.As(checkPathFree(s.db.WithContext(ctx), p), &taken) {
		return taken
	}
	return db.Classify(err)
}
