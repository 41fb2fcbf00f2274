package notedb

import (
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/note"
)

// chargeReplacing adds r's bytes and images to the usage of an account whose upload to
// publication r.Note replaces the images named in r.Replaces, in tx (which Reserve rolls
// back when the limits refuse them). The served images of those names, which committing
// the upload releases, are credited: the account may hold them and their replacements
// while the upload runs, but never more than the quota once it has committed (docs/api.md
// "Update": the quota counts the difference).
//
// The account's row is locked first, by the UPDATE, and the images are read after:
// every release of an image (a replacement's commit, an unpublish) takes the image off
// the usage in the same transaction as it marks it released, and so either committed
// before this lock was granted (the image is no longer credited, nor counted) or
// commits after this transaction (the image is credited and still counted). A credited
// byte is therefore always one the usage holds, and each check bounds what the usage
// settles at: the other uploads' reservations are counted in full, and a concurrent
// replacement of the same image is charged as its own upload was.
func chargeReplacing(tx *gorm.DB, r note.Reservation) error {
	accountCUID, bytes, images := r.Account, r.Bytes, r.Images
	if err := tx.Exec("UPDATE accounts SET image_bytes_used = image_bytes_used + ?, image_count = image_count + ? WHERE cuid = ?",
		bytes, images, accountCUID).Error; err != nil {
		return err
	}
	var used struct{ ImageBytesUsed, ImageCount int64 }
	if err := tx.Raw("SELECT image_bytes_used, image_count FROM accounts WHERE cuid = ?", accountCUID).Scan(&used).Error; err != nil {
		return err
	}
	var credit struct{ Bytes, Images int64 }
	if err := tx.Raw("SELECT COALESCE(SUM(size), 0) AS bytes, COUNT(*) AS images FROM images "+
		"WHERE publication_cuid = ? AND account_cuid = ? AND NOT released AND filename IN ?", r.Note, accountCUID, r.Replaces).
		Scan(&credit).Error; err != nil {
		return err
	}
	// Only what this call adds is checked: another upload's credit may hold the usage
	// above a limit for a while, which must not fail the chunks of an image already
	// counted.
	if images > 0 && used.ImageCount-credit.Images > note.MaxImagesPerAccount {
		return &note.TooManyImagesError{Limit: note.MaxImagesPerAccount, PerAccount: true}
	}
	if bytes > 0 && used.ImageBytesUsed-credit.Bytes > r.Quota {
		return note.ErrQuotaExceeded
	}
	return nil
}
