package notedb

import (
	"context"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Blobs keeps image bytes by key. The database implementation writes inside the publish
// transaction (tx), so bytes and metadata commit together. An object store would ignore
// tx and write before the transaction commits; the reaper would then also collect keys
// that no image row names.
type Blobs interface {
	Put(tx *gorm.DB, key string, data []byte) error
	Get(ctx context.Context, gdb *gorm.DB, key string) ([]byte, error)
	Delete(ctx context.Context, gdb *gorm.DB, keys []string) error
}

// DBBlobs keeps image bytes in the blobs table of the service's database.
type DBBlobs struct{}

var _ Blobs = DBBlobs{}

// Put implements Blobs.
func (DBBlobs) Put(tx *gorm.DB, key string, data []byte) error {
	return tx.Table("blobs").Clauses(clause.OnConflict{DoNothing: true}).Create(map[string]any{"key": key, "data": data}).Error
}

// Get implements Blobs.
func (DBBlobs) Get(ctx context.Context, gdb *gorm.DB, key string) ([]byte, error) {
	var data []byte
	if err := gdb.WithContext(ctx).Raw("SELECT data FROM blobs WHERE key = ?", key).Row().Scan(&data); err != nil {
		return nil, err
	}
	return data, nil
}

// Delete implements Blobs; deleting a missing key is not an error, so a reaper run that
// died half-way can simply run again.
func (DBBlobs) Delete(ctx context.Context, gdb *gorm.DB, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	return gdb.WithContext(ctx).Exec("DELETE FROM blobs WHERE key IN ?", keys).Error
}
