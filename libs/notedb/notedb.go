// Package notedb stores publications, version snapshots and image metadata with gorm, on
// Postgres or SQLite; image bytes are in the object store (libs/blob).
package notedb

import (
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/edge"
	"github.com/sharenote/sharenote/libs/note"
)

var _ note.Storer = (*Store)(nil)

// Store implements note.Storer.
type Store struct {
	db    *gorm.DB
	blobs blob.Store
	// outbox takes the edge purges of the changes, in their transactions; nil: no edge.
	outbox *edge.Outbox
}

// New returns a Store on gdb whose images' bytes are in blobs.
func New(gdb *gorm.DB, blobs blob.Store) *Store { return &Store{db: gdb, blobs: blobs} }

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
