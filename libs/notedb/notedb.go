// Package notedb stores publications, version snapshots and image metadata with gorm, on
// Postgres or SQLite; image bytes are in the object store (libs/blob).
package notedb

import (
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/note"
)

var _ note.Storer = (*Store)(nil)

// Store implements note.Storer.
type Store struct {
	db    *gorm.DB
	blobs blob.Store
}

// New returns a Store on gdb whose images' bytes are in blobs.
func New(gdb *gorm.DB, blobs blob.Store) *Store { return &Store{db: gdb, blobs: blobs} }
