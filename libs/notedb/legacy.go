package notedb

import (
	"bytes"
	"context"
	"errors"

	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/db"
)

// Copied counts what CopyLegacyImages did.
type Copied struct {
	// Objects were copied, Bytes in all; Skipped were in the store already.
	Objects, Skipped int
	Bytes            int64
}

// CopyLegacyImages copies the image bytes that releases before the object store kept in
// the blobs table into the store, under the same keys, in key order, one image in memory
// at a time, calling progress after every batch. An object the store already has with the
// row's size is skipped, so a copy that was interrupted simply runs again. The rows stay:
// the previous release reads them while a rolling upgrade runs and after a rollback, and
// this one reads them for any image not copied yet (note.Core.OpenImage); a later
// release deletes them.
func (s *Store) CopyLegacyImages(ctx context.Context, batch int, progress func(Copied)) (Copied, error) {
	var total Copied
	length := "length(b.data)"
	if db.Dialect(s.db) == db.Postgres {
		length = "octet_length(b.data)"
	}
	after := ""
	for {
		var rows []struct {
			Key       string
			Size      int64
			MediaType string
		}
		if err := s.db.WithContext(ctx).Raw("SELECT b.key, "+length+" AS size, COALESCE(i.media_type, '') AS media_type "+
			"FROM blobs b LEFT JOIN images i ON i.blob_key = b.key WHERE b.key > ? ORDER BY b.key LIMIT ?", after, batch).
			Scan(&rows).Error; err != nil {
			return total, db.Classify(err)
		}
		for _, r := range rows {
			info, err := s.blobs.Stat(ctx, r.Key)
			switch {
			case err == nil && info.Size == r.Size:
				total.Skipped++
				continue
			case err != nil && !errors.Is(err, blob.ErrNotFound):
				return total, err
			}
			data, err := s.LegacyImage(ctx, r.Key)
			if err != nil {
				return total, err
			}
			if _, err := s.blobs.Put(ctx, r.Key, bytes.NewReader(data), int64(len(data)), r.MediaType); err != nil {
				return total, err
			}
			total.Objects++
			total.Bytes += int64(len(data))
		}
		if len(rows) > 0 {
			progress(total)
		}
		if len(rows) < batch {
			return total, nil
		}
		after = rows[len(rows)-1].Key
	}
}
