// Package notedb stores publications, version snapshots and image metadata with gorm, on
// Postgres or SQLite. Image bytes are in the object store, which the note domain alone
// reads and writes (note.Images, note.Publisher, note.Reaper): nothing here touches it.
package notedb

import (
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/edge"
	"github.com/sharenote/sharenote/libs/note"
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

// Store stores publications: it does what Reads does, and writes.
type Store struct {
	Reads
	// outbox takes the edge purges of the changes, in their transactions; nil: no edge.
	outbox *edge.Outbox
}

// New returns a Store on gdb.
func New(gdb *gorm.DB) *Store { return &Store{Reads: Reads{db: gdb}} }

// WithOutbox makes s write the edge purges of its changes to o in their transactions.
func (s *Store) WithOutbox(o *edge.Outbox) *Store { s.outbox = o; return s }

// purges are the edge's purges of a change (libs/edge's package doc): the note's content
// key, with its reference key when what links to it show changed, hard or soft; and,
// when the names the account's links match changed, every read of the account, soft
// (libs/edge's package doc says why not a key of its own).
func purges(c note.Change) []edge.Purge {
	scope := edge.Content
	if c.References {
		scope = edge.Both
	}
	out := []edge.Purge{{Account: c.Account, Note: c.Note, Scope: scope, Hard: c.Hard}}
	if c.Names {
		out = append(out, edge.Purge{Account: c.Account})
	}
	return out
}
