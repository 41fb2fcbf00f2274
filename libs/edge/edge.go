// Package edge serves an operator's edge (a CDN, Varnish): the surrogate keys and the
// edge lifetime of public reads, and the durable outbox from which the edge is purged of
// every changed public read, at least once.
//
// Keys (CONTRACT "Caching and invalidation"): every key is a keyed hash (HMAC-SHA-256
// under the installation's "surrogate" service key, made by the migration), so that the
// keys tell nothing of the note or the account to whoever sees them. Each note has two:
//   - its content key: its own reads (JSON, page, preview, images) and the pages that
//     embed it, which show its render and title;
//   - its reference key: the pages that link to it, which show where the link leads
//     (the note's address and the anchor of the heading or block it names).
//
// A read carries the content key of its note, the content keys of the notes it embeds
// (readcache.Entry.Embeds) and the reference keys of the notes it links to (Entry.Links),
// MaxNoteKeys at most (Keys.Header). Not its own reference key: every change that purges
// a note's reference key purges its content key too, so it would add a key and no purge.
// A read over the cap carries its author's key instead of the keys past it; every purge
// of an account's notes also purges the author's key (as hard as the hardest of them), so
// that such a read is dropped with any note it may show. No other read carries the author
// key: a reader of the edge's objects (or of the origin, were the edge's addresses
// wrong) cannot tell from the keys which notes are one account's.
//
// Reads that depend on the account as a whole are purged through their notes' keys, not
// through a key they all carry: a settings change (its name, theme, whether the author is
// shown) and a change of the account's names (a note with names published, retitled,
// moved, unshared or expired: what any of the account's links resolve to may change, also
// links that led nowhere and so carry no key) write one row without a note, which the
// worker sends as the content and reference keys of every one of the account's notes that
// is not unpublished, and the author key. Its cost is a purge key per note, not a key on
// every read that would tie the account's notes together.
//
// Purges: a body edit drops the content key, soft (the edge may serve the old
// read within its grace while it fetches the new one), and the reference key too when the
// note's outline changed (the anchors that links lead to). A retitle, a move (a path
// change), an unshare, an expiry set or moved, and hiding the properties drop both keys;
// the unshare, the expiry and hiding the properties are hard, as is hiding the author (a
// settings change, which drops every key of the account): what they hide is never served
// from the grace. Keys are written
// 'n' (content: the letter of the single note key before reference keys, so that reads
// cached before them are dropped by the same purges), 'r' (reference) and 'a' (author),
// each followed by 96 bits of the HMAC.
//
// Only the edge gets the keys: a read carries Surrogate-Key and Surrogate-Control only
// when it came through one of the edge's addresses (SHARE_EDGE_ADDRESSES): its TCP peer,
// or an address of X-Forwarded-For that the trusted proxies between the peer and the
// reader put there (httpx.ClientIPs.Through). A reader who calls the ingress or a
// replica directly gets neither.
//
// Outbox: a change that alters a public read writes its note.Change in its own
// transaction to the outbox of changes (libs/outbox), due for the edge when an edge is
// configured. The purge job of a writing target (Worker.Run) claims the due rows
// (outbox.Edge: Postgres: SELECT … FOR UPDATE SKIP LOCKED inside the claim, so that two
// workers never take the same row; SQLite has one writer), turns them into keys
// (each key once, hard where any row wants it hard), and sends PURGE requests to every
// edge. A row is sent twice: at once, and again after the change feed's one second, when
// no replica can serve the old state any more and so no purge can have been answered
// from a replica that had not heard of the change yet. A failed send is tried again shortly; a backlog past MaxBacklog rows, or a row
// older than OutageBound (an edge outage), is replaced by one purge of everything.
//
// Files: edge.go holds the keys; accounts.go the notes of an account that a purge
// without a note drops; worker.go the job that drains the outbox.
package edge

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
)

// MaxNoteKeys is how many note keys a read carries at most; one past them carries its
// author's key instead of the rest.
const MaxNoteKeys = 64

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

// Content is the content key of a note: its reads and the pages that embed it.
func (k *Keys) Content(cuid string) string { return k.mac('n', cuid) }

// Reference is the reference key of a note: the pages that link to it.
func (k *Keys) Reference(cuid string) string { return k.mac('r', cuid) }

// Author is the key of an account's reads over the cap of MaxNoteKeys.
func (k *Keys) Author(cuid string) string { return k.mac('a', cuid) }

// Header is the Surrogate-Key header of a public read of note by owner that embeds the
// notes embeds and links to the notes links: the content keys of note and embeds, then
// the reference keys of links, each once, MaxNoteKeys at most, and owner's author key
// when more were left out. Every note of a read is owner's (embeds and links resolve
// among the author's notes only).
func (k *Keys) Header(note, owner string, embeds, links []string) string {
	keys := make([]string, 0, min(1+len(embeds)+len(links), MaxNoteKeys+1))
	over := false
	add := func(key string) {
		switch {
		case slices.Contains(keys, key):
		case len(keys) == MaxNoteKeys:
			over = true
		default:
			keys = append(keys, key)
		}
	}
	if note != "" {
		add(k.Content(note))
	}
	for _, cuid := range embeds {
		add(k.Content(cuid))
	}
	for _, cuid := range links {
		add(k.Reference(cuid))
	}
	if over && owner != "" {
		keys = append(keys, k.Author(owner))
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
