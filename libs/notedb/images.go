package notedb

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
)

// settle deletes the reservation of an upload whose rows tx is about to commit. It holds
// exactly the images' bytes and number: deleting it leaves them charged to the account
// for good. note.ErrUploadExpired when the reaper released it already.
func settle(tx *gorm.DB, reservation string) error {
	res := tx.Exec("DELETE FROM image_reservations WHERE id = ?", reservation)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return note.ErrUploadExpired
	}
	return nil
}

// insertImages adds the rows of stored images.
func insertImages(tx *gorm.DB, images []note.StoredImage) error {
	rows := make([]imageRow, len(images))
	for i, img := range images {
		rows[i] = imageRow{AccountCUID: img.AccountCUID, PublicationCUID: img.PublicationCUID, Filename: img.Filename,
			MediaType: img.MediaType, Size: img.Size, SHA256: img.SHA256, BlobKey: img.BlobKey, CreatedAt: img.CreatedAt}
	}
	return tx.Create(&rows).Error
}

// replaceImages releases the images of publication cuid that images replace (same
// name): like an unpublished note's, they leave the account's usage at once and the
// reaper deletes them. A released image is renamed to its blob key, which no served
// image can have ('/' is not allowed in filenames), so that its new namesake can take
// the name. Then it adds the rows of images.
func replaceImages(tx *gorm.DB, cuid, accountCUID string, images []note.StoredImage) error {
	for _, img := range images {
		var sizes []int64
		if err := tx.Raw("UPDATE images SET released = ?, filename = blob_key WHERE publication_cuid = ? AND filename = ? AND NOT released RETURNING size",
			true, cuid, img.Filename).Scan(&sizes).Error; err != nil {
			return err
		}
		for _, size := range sizes {
			if err := tx.Exec("UPDATE accounts SET image_bytes_used = image_bytes_used - ?, image_count = image_count - 1 WHERE cuid = ?",
				size, accountCUID).Error; err != nil {
				return err
			}
		}
	}
	return insertImages(tx, images)
}

// Reserve implements note.UploadStore. The account's usage is raised with one conditional
// UPDATE: under concurrency Postgres re-checks the condition after waiting for the row
// lock (and SQLite has one writer), so parallel uploads can never push the usage past
// quota nor the count past note.MaxImagesPerAccount. The count is a column beside the
// bytes rather than a COUNT of the image rows so that the check costs the same one row
// update at 10,000 images as at none. An upload that replaces images is charged by
// chargeReplacing instead.
func (s *Store) Reserve(ctx context.Context, r note.Reservation) error {
	id, noteCUID, accountCUID, bytes, images, quota := r.ID, r.Note, r.Account, r.Bytes, r.Images, r.Quota
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The reservation first: adding to one the reaper released must fail before the
		// account is charged, and must not make it anew.
		if r.Create {
			if err := tx.Exec("INSERT INTO image_reservations (id, note_cuid, account_cuid, bytes, images, expires_ms) VALUES (?, ?, ?, ?, ?, ?)",
				id, noteCUID, accountCUID, bytes, images, r.Expires.UnixMilli()).Error; err != nil {
				return err
			}
		} else {
			res := tx.Exec("UPDATE image_reservations SET bytes = bytes + ?, images = images + ?, expires_ms = ? WHERE id = ?",
				bytes, images, r.Expires.UnixMilli(), id)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				return note.ErrUploadExpired
			}
		}
		if len(r.Replaces) > 0 {
			return chargeReplacing(tx, r)
		}
		res := tx.Exec("UPDATE accounts SET image_bytes_used = image_bytes_used + ?, image_count = image_count + ? "+
			"WHERE cuid = ? AND image_bytes_used + ? <= ? AND image_count + ? <= ?",
			bytes, images, accountCUID, bytes, quota, images, note.MaxImagesPerAccount)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected > 0 {
			return nil
		}
		// Which limit refused it, for the message: the row is read again, so a concurrent
		// change can only make the answer name the other limit, never admit the bytes.
		var count int64
		if err := tx.Raw("SELECT image_count FROM accounts WHERE cuid = ?", accountCUID).Row().Scan(&count); err != nil {
			return err
		}
		if count+int64(images) > note.MaxImagesPerAccount {
			return &note.TooManyImagesError{Limit: note.MaxImagesPerAccount, PerAccount: true}
		}
		return note.ErrQuotaExceeded
	}))
}

// Release implements note.UploadStore.
func (s *Store) Release(ctx context.Context, id string) error {
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		_, err := release(tx, "id = ?", id)
		return err
	}))
}

// reservation is a reservation that release deleted.
type reservation struct {
	NoteCUID    string `gorm:"column:note_cuid"`
	AccountCUID string `gorm:"column:account_cuid"`
	Bytes       int64
	Images      int64
}

// release deletes the reservations that where (with args) selects and takes their bytes
// and images off their accounts' usage, in tx.
func release(tx *gorm.DB, where string, args ...any) ([]reservation, error) {
	var rs []reservation
	if err := tx.Raw("DELETE FROM image_reservations WHERE "+where+" RETURNING note_cuid, account_cuid, bytes, images", args...).
		Scan(&rs).Error; err != nil {
		return nil, err
	}
	for _, r := range rs {
		if err := tx.Exec("UPDATE accounts SET image_bytes_used = image_bytes_used - ?, image_count = image_count - ? WHERE cuid = ?",
			r.Bytes, r.Images, r.AccountCUID).Error; err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// FindImageView implements note.ImageStore.
func (s *Reads) FindImageView(ctx context.Context, userCUID, noteCUID, filename string) (note.ImageView, error) {
	var row struct {
		Image          imageRow `gorm:"embedded"`
		Owner          ownerRow `gorm:"embedded"`
		ExpiresAt      *time.Time
		Unpublished    bool
		UpdatedAt      time.Time
		PublicationTag string
	}
	err := s.db.WithContext(ctx).Table("images i").
		Select("i.*, p.expires_at, p.unpublished, p.updated_at, p.etag AS publication_tag, "+ownerColumns).
		Joins("JOIN publications p ON p.cuid = i.publication_cuid").
		Joins("JOIN accounts a ON a.cuid = p.account_cuid").
		Where("i.account_cuid = ? AND i.publication_cuid = ? AND i.filename = ? AND NOT i.released", userCUID, noteCUID, filename).
		Take(&row).Error
	if err != nil {
		return note.ImageView{}, db.Classify(notFound(err))
	}
	i := row.Image
	img := note.StoredImage{AccountCUID: i.AccountCUID, PublicationCUID: i.PublicationCUID, Filename: i.Filename,
		MediaType: i.MediaType, Size: i.Size, SHA256: i.SHA256, BlobKey: i.BlobKey, CreatedAt: i.CreatedAt}
	p := note.Publication{CUID: i.PublicationCUID, AccountCUID: i.AccountCUID, Text: note.Text{ExpiresAt: utc(row.ExpiresAt)},
		Unpublished: row.Unpublished, UpdatedAt: row.UpdatedAt.UTC(), ETag: row.PublicationTag}
	return note.ImageView{Image: img, Note: note.View{Publication: p, Owner: row.Owner.settings()}}, nil
}

// LegacyImage implements note.ImageStore.
func (s *Reads) LegacyImage(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	err := s.db.WithContext(ctx).Raw("SELECT data FROM blobs WHERE key = ?", key).Row().Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, note.ErrNotFound
	}
	return data, db.Classify(err)
}
