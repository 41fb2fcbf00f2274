package notedb

import (
	"context"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
)

// Versions implements note.HistoryStore.
func (s *Store) Versions(ctx context.Context, n note.Owned) ([]note.VersionMeta, error) {
	if err := s.exists(ctx, n); err != nil {
		return nil, err
	}
	var rows []struct {
		Version      int64
		CreatedAt    time.Time
		Title        *string
		ContentBytes int
	}
	err := s.db.WithContext(ctx).Model(&versionRow{}).
		Select("version, created_at, title, "+lengthBytes(s.db)+" AS content_bytes").
		Where("publication_cuid = ?", n.CUID).Order("version DESC").Limit(note.MaxVersions).Scan(&rows).Error
	if err != nil {
		return nil, db.Classify(err)
	}
	out := make([]note.VersionMeta, len(rows))
	for i, r := range rows {
		out[i] = note.VersionMeta{Number: r.Version, CreatedAt: r.CreatedAt, Title: r.Title, ContentBytes: r.ContentBytes}
	}
	return out, nil
}

// lengthBytes is the dialect's byte length of the content column.
func lengthBytes(gdb *gorm.DB) string {
	if db.Dialect(gdb) == db.Postgres {
		return "octet_length(content)"
	}
	return "length(CAST(content AS BLOB))"
}

// Version implements note.HistoryStore.
func (s *Store) Version(ctx context.Context, n note.Owned, number int64) (note.Version, error) {
	if err := s.exists(ctx, n); err != nil {
		return note.Version{}, err
	}
	var row versionRow
	if err := s.db.WithContext(ctx).Where("publication_cuid = ? AND version = ?", n.CUID, number).Take(&row).Error; err != nil {
		return note.Version{}, db.Classify(notFound(err))
	}
	text, err := fromText(row.Text)
	if err != nil {
		return note.Version{}, err
	}
	return note.Version{Number: row.Version, CreatedAt: row.CreatedAt, Text: text}, nil
}

func (s *Store) exists(ctx context.Context, n note.Owned) error {
	var count int64
	if err := owned(s.db.WithContext(ctx).Model(&publicationRow{}), n).Count(&count).Error; err != nil {
		return db.Classify(err)
	}
	if count == 0 {
		return note.ErrNotFound
	}
	return nil
}
