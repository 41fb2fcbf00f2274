package notedb

import (
	"context"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
)

// LegacyBlobs implements note.ReapStore: the rows of the blobs table, in which releases
// before the object store kept image bytes, that note.Reaper.CopyLegacyImages copies
// into the store. It reads their sizes, not their bytes (LegacyImage reads those).
func (s *Store) LegacyBlobs(ctx context.Context, after string, limit int) ([]note.LegacyBlob, error) {
	length := "length(b.data)"
	if db.Dialect(s.db) == db.Postgres {
		length = "octet_length(b.data)"
	}
	var rows []note.LegacyBlob
	if err := s.db.WithContext(ctx).Raw("SELECT b.key, "+length+" AS size, COALESCE(i.media_type, '') AS media_type "+
		"FROM blobs b LEFT JOIN images i ON i.blob_key = b.key WHERE b.key > ? ORDER BY b.key LIMIT ?", after, limit).
		Scan(&rows).Error; err != nil {
		return nil, db.Classify(err)
	}
	return rows, nil
}
