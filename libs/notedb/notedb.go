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

// notePurges are the purges of a change of note cuid of account: of its keys in scope,
// hard or soft, and, when names is set, of every read of the account, soft (the names its
// links resolve among changed; libs/edge's package doc says why not a key of its own).
func notePurges(account, cuid string, scope edge.Scope, hard, names bool) []edge.Purge {
	out := []edge.Purge{{Account: account, Note: cuid, Scope: scope, Hard: hard}}
	if names {
		out = append(out, edge.Purge{Account: account})
	}
	return out
}

// updatePurges are the purges of an update of cuid from old to p (libs/edge's package
// doc): its content key, soft, for a body edit; both keys for a retitle, a move, a new
// outline (the anchors that links into it lead to), an expiry set or moved, or hidden
// properties; hard for the last two; and every read of the account when its names
// changed (note.LinksChange, whose anchors the reference key covers).
func updatePurges(account, cuid string, old, p note.Publication) []edge.Purge {
	hard := note.ExpiryChange(old, p) || old.ShowProperties && !p.ShowProperties
	scope := edge.Content
	if hard || !samePath(old.Title, p.Title) || !samePath(old.Path, p.Path) || old.Outline != p.Outline {
		scope = edge.Both
	}
	names := note.LinksChange(old, p, func(a, b string) bool { return true })
	return notePurges(account, cuid, scope, hard, names)
}
