// Package notedb stores publications, version snapshots and image metadata with gorm, on
// Postgres or SQLite. Image bytes are in the object store, which the note domain alone
// reads and writes (note.Images, note.Publisher, note.Reaper): nothing here touches it.
package notedb

import (
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/outbox"
)

// The use cases' ports each store implements.
var (
	_ interface {
		note.PublishStore
		note.UploadStore
		note.RenderStore
		note.HistoryStore
		note.ReapStore
	} = (*Store)(nil)
	_ interface {
		note.ReadStore
		note.CardStore
		note.ImageStore
	} = (*Reads)(nil)
)

// Reads reads publications, for the public: it writes nothing, so that a target whose
// database role may only read (app.ReadOnly) is given this and no more.
type Reads struct {
	db *gorm.DB
}

// NewReads returns the Reads on gdb.
func NewReads(gdb *gorm.DB) *Reads { return &Reads{db: gdb} }

// Store stores publications: it does what Reads does, and writes, and writes the
// note.Change of each change in its transaction to the outbox.
type Store struct {
	Reads
	outbox *outbox.Writer
}

// New returns a Store on gdb whose changes w writes.
func New(gdb *gorm.DB, w *outbox.Writer) *Store { return &Store{Reads: Reads{db: gdb}, outbox: w} }
