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

// linkPurges are the purges of a change of note cuid of account whose reads it alters,
// and, when links is set, of every read of the account (what its links lead to changed).
func linkPurges(account, cuid string, hard, links bool) []edge.Purge {
	out := []edge.Purge{{Account: account, Note: cuid, Hard: hard}}
	if links {
		out = append(out, edge.Purge{Account: account})
	}
	return out
}
