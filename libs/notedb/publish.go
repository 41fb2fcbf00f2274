package notedb

import (
	"context"

	"github.com/sharenote/sharenote/libs/db"
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
	if len(images) == 0 {
		// One statement is atomic by itself: no transaction, two round trips fewer.
		return db.Classify(s.db.WithContext(ctx).Create(&row).Error)
	}
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := settle(tx, reservation); err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return insertImages(tx, images)
	}))
}
