package notedb

import (
	"context"
	"slices"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// owned selects the owner's publication that is not unpublished.
func owned(tx *gorm.DB, cuid, accountCUID string) *gorm.DB {
	return tx.Where("cuid = ? AND account_cuid = ? AND NOT unpublished", cuid, accountCUID)
}

// Update implements note.PublishStore. A path another publication holds is found by the unique
// index publications_path (Create).
func (s *Store) Update(ctx context.Context, cuid, accountCUID string, now time.Time, images []note.StoredImage, reservation string,
	apply func(*note.Publication, []string) (note.Change, error)) (note.Publication, error) {
	var out, applied note.Publication
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row publicationRow
		// FOR UPDATE serialises concurrent updates of one publication on Postgres, so
		// version numbers are unique and increasing; SQLite has a single writer anyway.
		if err := owned(tx, cuid, accountCUID).Clauses(clause.Locking{Strength: "UPDATE"}).Take(&row).Error; err != nil {
			return notFound(err)
		}
		snapshot := versionRow{PublicationCUID: cuid, Version: row.NextVersion, Text: row.Text, CreatedAt: now}
		if err := tx.Create(&snapshot).Error; err != nil {
			return err
		}
		if err := tx.Where("publication_cuid = ? AND version <= ?", cuid, row.NextVersion-note.MaxVersions).Delete(&versionRow{}).Error; err != nil {
			return err
		}
		names, err := imageNames(tx, cuid, images)
		if err != nil {
			return err
		}
		p, err := fromRow(row)
		if err != nil {
			return err
		}
		old := p
		change, err := apply(&p, names)
		if err != nil {
			return err
		}
		applied = p
		pathChanged := !samePath(old.Path, p.Path)
		next, err := toRow(p)
		if err != nil {
			return err
		}
		next.NextVersion = row.NextVersion + 1
		if err := tx.Select("*").Updates(&next).Error; err != nil {
			return err
		}
		if pathChanged || namesStale(old, p, row.NamesVersion) {
			if err := writeNames(tx, p); err != nil {
				return err
			}
		}
		if len(images) > 0 {
			if err := settle(tx, reservation); err != nil {
				return err
			}
			if err := replaceImages(tx, cuid, accountCUID, images); err != nil {
				return err
			}
		}
		out = p
		return s.outbox.Write(tx, purges(change)...)
	})
	if err != nil {
		return note.Publication{}, s.pathTaken(ctx, err, applied)
	}
	return out, nil
}

// Editable implements note.PublishStore.
func (s *Store) Editable(ctx context.Context, cuid, accountCUID string, images []note.StoredImage) (note.Publication, []string, error) {
	d := s.db.WithContext(ctx)
	var row publicationRow
	if err := owned(d, cuid, accountCUID).Take(&row).Error; err != nil {
		return note.Publication{}, nil, db.Classify(notFound(err))
	}
	p, err := fromRow(row)
	if err != nil {
		return note.Publication{}, nil, err
	}
	names, err := imageNames(d, cuid, images)
	return p, names, db.Classify(err)
}

// imageNames are the names of the publication's images and of the new images, which
// replace those of the same names.
func imageNames(tx *gorm.DB, cuid string, images []note.StoredImage) ([]string, error) {
	var names []string
	if err := tx.Model(&imageRow{}).Where("publication_cuid = ? AND NOT released", cuid).Order("filename").Pluck("filename", &names).Error; err != nil {
		return nil, err
	}
	for _, img := range images {
		if !slices.Contains(names, img.Filename) {
			names = append(names, img.Filename)
		}
	}
	return names, nil
}

// Unpublish implements note.PublishStore.
func (s *Store) Unpublish(ctx context.Context, cuid, accountCUID string, now time.Time, change note.Change) error {
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := owned(tx.Model(&publicationRow{}), cuid, accountCUID).Updates(map[string]any{"unpublished": true, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return note.ErrNotFound
		}
		if err := tx.Where("publication_cuid = ?", cuid).Delete(&nameRow{}).Error; err != nil {
			return err
		}
		if err := s.outbox.Write(tx, purges(change)...); err != nil {
			return err
		}
		var released struct{ Bytes, Images int64 }
		if err := tx.Model(&imageRow{}).Where("publication_cuid = ? AND NOT released", cuid).
			Select("COALESCE(SUM(size), 0) AS bytes, COUNT(*) AS images").Scan(&released).Error; err != nil {
			return err
		}
		if err := tx.Model(&imageRow{}).Where("publication_cuid = ? AND NOT released", cuid).Update("released", true).Error; err != nil {
			return err
		}
		return tx.Exec("UPDATE accounts SET image_bytes_used = image_bytes_used - ?, image_count = image_count - ? WHERE cuid = ?",
			released.Bytes, released.Images, accountCUID).Error
	}))
}
