package notedb

import (
	"context"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/edge"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
)

// Create implements note.Storer.
func (s *Store) Create(ctx context.Context, p note.Publication, images []note.StoredImage, reservation string) error {
	row, err := toRow(p)
	if err != nil {
		return err
	}
	row.NextVersion = 1
	// A new note's reads were cached nowhere: only the pages its names may be linked
	// from are purged.
	links := len(p.Names()) > 0
	if len(images) == 0 && p.Path == nil && !links {
		// One statement is atomic by itself: no transaction, two round trips fewer.
		return db.Classify(s.db.WithContext(ctx).Create(&row).Error)
	}
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := checkPathFree(tx, p); err != nil {
			return err
		}
		if len(images) > 0 {
			if err := settle(tx, reservation); err != nil {
				return err
			}
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		if err := insertNames(tx, p); err != nil {
			return err
		}
		if links {
			if err := s.outbox.Write(tx, edge.Purge{Account: p.AccountCUID}); err != nil {
				return err
			}
		}
		if len(images) == 0 {
			return nil
		}
		return insertImages(tx, images)
	}))
}
