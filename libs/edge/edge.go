// Package edge serves an operator's edge (a CDN, Varnish): the surrogate keys and the
// edge lifetime of public reads, and the durable outbox from which the edge is purged of
// every changed public read, at least once.
//
// Keys: each public read carries two Surrogate-Key values, a keyed hash (HMAC-SHA-256
// under the installation's "surrogate" service key, made by the migration) of its note
// and of its author, so that one purge drops a note's reads, or every public read of an
// author (a settings change, or a change of what the author's links lead to), and the
// keys tell nothing of the account to whoever sees them.
//
// Outbox: a change that alters a public read writes its Purge rows (table edge_purges) in
// its own transaction (Outbox.Write). The purge job of a writing target (Worker.Run)
// claims the due rows (Postgres: SELECT … FOR UPDATE SKIP LOCKED inside the claim, so
// that two workers never take the same row; SQLite has one writer), coalesces them per
// author, and sends PURGE requests to every edge. A row is sent twice: at once, and again
// after the change feed's one second, when no replica can serve the old state any more
// and so no purge can have been answered from a replica that had not heard of the change
// yet. A failed send is tried again shortly; a backlog past MaxBacklog rows, or a row
// older than OutageBound (an edge outage), is replaced by one purge of everything.
//
// Files: edge.go holds the purges and keys; outbox.go the table's statements;
// worker.go the job that drains it.
package edge

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// Purge is one change of public reads: of note Note of account Account, or of every
// public read of Account when Note is empty. Hard purges drop the cached reads at once
// (unshare, expiry moved); soft ones let the edge serve the old read while it fetches
// the new one.
type Purge struct {
	Account, Note string
	Hard          bool
}

// Keys makes the Surrogate-Key values of public reads.
type Keys struct {
	secret []byte
}

// NewKeys returns the keys made with secret.
func NewKeys(secret []byte) *Keys { return &Keys{secret: secret} }

// LoadKeys returns the keys made with the installation's surrogate key.
func LoadKeys(ctx context.Context, gdb *gorm.DB) (*Keys, error) {
	var secret []byte
	if err := gdb.WithContext(ctx).Raw("SELECT secret FROM service_keys WHERE name = ?", "surrogate").Row().Scan(&secret); err != nil {
		return nil, fmt.Errorf("load the surrogate key: %w", err)
	}
	return NewKeys(secret), nil
}

// Note is the key of a note's public reads.
func (k *Keys) Note(cuid string) string { return k.mac('n', cuid) }

// Account is the key of every public read of an account's notes.
func (k *Keys) Account(cuid string) string { return k.mac('a', cuid) }

// Header is the Surrogate-Key header of a public read of note by owner (either may be
// empty: an unknown note has no owner).
func (k *Keys) Header(note, owner string) string {
	var keys []string
	if note != "" {
		keys = append(keys, k.Note(note))
	}
	if owner != "" {
		keys = append(keys, k.Account(owner))
	}
	return strings.Join(keys, " ")
}

// mac is the key of id in kind: the kind's letter and 96 bits of the HMAC.
func (k *Keys) mac(kind byte, id string) string {
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte{kind, 0})
	m.Write([]byte(id))
	return string(kind) + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:12])
}
