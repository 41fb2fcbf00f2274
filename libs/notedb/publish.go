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
		if err := writeNames(tx, p); err != nil || len(images) == 0 {
			return err
		}
		return insertImages(tx, images)
	}))
}
