package notedb

import (
	"context"
	"slices"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
)

// owned selects the owner's publication that is not unpublished.
func owned(tx *gorm.DB, n note.Owned) *gorm.DB {
	return tx.Where("cuid = ? AND account_cuid = ? AND NOT unpublished", n.CUID, n.Account)
}

// Commit implements note.PublishStore: the publication is written only if it still has
// the etag e was decided on, so an update holds no lock while it is decided and rendered;
// on Postgres a concurrent commit waits for this one's row and then finds the etag gone.
// A path another publication holds is found by the unique index publications_path.
func (s *Store) Commit(ctx context.Context, e note.Edit) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		next, err := toRow(e.To)
		if err != nil {
			return err
		}
		next.NextVersion = e.Kept.Number + 1
		write := owned(tx, e.Owned).Where("etag = ?", e.From).Select("*")
		if !e.Rendered {
			write = write.Omit(renderColumns...)
		}
		res := write.Updates(&next)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			if err := owned(tx, e.Owned).Select("cuid").Take(&publicationRow{}).Error; err != nil {
				return notFound(err)
			}
			return note.ErrStale
		}
		kept, err := toText(e.Kept.Text)
		if err != nil {
			return err
		}
		if err := tx.Create(&versionRow{PublicationCUID: e.CUID, Version: e.Kept.Number, Text: kept, CreatedAt: e.Kept.CreatedAt}).Error; err != nil {
			return err
		}
		if err := tx.Where("publication_cuid = ? AND version <= ?", e.CUID, e.Prune).Delete(&versionRow{}).Error; err != nil {
			return err
		}
		switch {
		case e.Names:
			if err := writeNames(tx, e.To); err != nil {
				return err
			}
		case e.Rendered:
			if err := writeLinks(tx, e.To); err != nil {
				return err
			}
		}
		if len(e.Images) > 0 {
			if err := settle(tx, e.Reservation); err != nil {
				return err
			}
			if err := replaceImages(tx, e.CUID, e.Account, e.Images); err != nil {
				return err
			}
		}
		return s.outbox.Write(tx, e.Change)
	})
	return s.pathTaken(ctx, err, e.To)
}

// renderColumns are the columns of a publication's render, which an edit without new
// content leaves as they are.
var renderColumns = []string{"html", "html_bytes", "render_version", "render_id", "render_links", "render_tries",
	"render_misses", "render_retry_ms", "render_outline"}

// Editable implements note.PublishStore.
func (s *Store) Editable(ctx context.Context, n note.Owned, images []note.StoredImage) (note.Current, error) {
	d := s.db.WithContext(ctx)
	var row publicationRow
	if err := owned(d, n).Take(&row).Error; err != nil {
		return note.Current{}, db.Classify(notFound(err))
	}
	p, err := fromRow(row)
	if err != nil {
		return note.Current{}, err
	}
	names, err := imageNames(d, n.CUID, images)
	return note.Current{Publication: p, Images: names, Version: row.NextVersion, NamesVersion: row.NamesVersion}, db.Classify(err)
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
func (s *Store) Unpublish(ctx context.Context, n note.Owned, now time.Time, change note.Change) error {
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := owned(tx.Model(&publicationRow{}), n).Updates(map[string]any{"unpublished": true, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return note.ErrNotFound
		}
		if err := tx.Where("publication_cuid = ?", n.CUID).Delete(&nameRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("publication_cuid = ?", n.CUID).Delete(&linkRow{}).Error; err != nil {
			return err
		}
		if err := s.outbox.Write(tx, change); err != nil {
			return err
		}
		var released struct{ Bytes, Images int64 }
		if err := tx.Model(&imageRow{}).Where("publication_cuid = ? AND NOT released", n.CUID).
			Select("COALESCE(SUM(size), 0) AS bytes, COUNT(*) AS images").Scan(&released).Error; err != nil {
			return err
		}
		if err := tx.Model(&imageRow{}).Where("publication_cuid = ? AND NOT released", n.CUID).Update("released", true).Error; err != nil {
			return err
		}
		return tx.Exec("UPDATE accounts SET image_bytes_used = image_bytes_used - ?, image_count = image_count - ? WHERE cuid = ?",
			released.Bytes, released.Images, n.Account).Error
	}))
}
