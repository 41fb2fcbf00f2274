// Package readcache is the per-process cache of public reads (CONTRACT.md "Caching and
// invalidation"): the final bytes of a note's JSON, its page, its preview PNG and its
// images, each with its validator and content encoding, so that a read of a cached note
// costs no database query, no Redis command and no rendering.
//
// Entries are keyed by route, cuid and encoding (the caller builds the key), bounded by
// their total size, and dropped by the change feed's events: a Note event drops every
// entry of that publication, an Account event every entry of that owner. An entry is
// served only while it is fresh (changefeed.Feed.Fresh): the feed vouches that no change
// has been missed since it was loaded, or it is younger than a second. A stale entry is
// re-checked by one load per key at a time, however many readers ask, and is kept (with
// its compressed variants) when the re-check finds the same validator.
package readcache

import (
	"container/list"
	"context"
	"io"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/sharenote/sharenote/libs/changefeed"
)

// NegativeTTL bounds how long "this publication is not there" is believed. Publishing
// drops the entry through the feed; the bound covers a process that cannot hear it.
const NegativeTTL = 5 * time.Second

// loadTimeout bounds one load, which runs detached from the request that started it
// because other readers may be waiting for it.
const loadTimeout = 10 * time.Second

// Entry is a cached public read. Entries are shared between readers: never modify one
// after handing it to the cache.
type Entry struct {
	// NotFound marks a negative entry: the publication is unknown, expired or unpublished.
	NotFound bool
	Body     []byte
	// Open streams the body, n bytes from offset off (n < 0: to the end), of an entry too
	// large to hold: Body is then nil and Size is the body's length.
	Open        func(ctx context.Context, off, n int64) (io.ReadCloser, error)
	Size        int64
	ContentType string
	// Encoding is the Content-Encoding of Body: "" (identity), "gzip" or "br".
	Encoding string
	// ETag is the representation's strong validator, quoted.
	ETag string
	// ExpiresAt is the publication's expiry; from then on the edge answers 404 without
	// asking the database.
	ExpiresAt *time.Time
	// StaleAt is when the entry goes stale though nothing was changed: the publication
	// links to a note that expires then. From then on it is loaded again.
	StaleAt *time.Time
	// Noindex asks search engines not to index the read.
	Noindex bool
	// Header holds further response headers (the page's Content-Security-Policy).
	Header [][2]string
	// Note and Owner are the publication and account whose changes drop the entry.
	Note, Owner string

	loadedAt time.Time
	epoch    uint64 // The cache's drop count when the load began.
}

// Expired reports whether the publication had expired at now.
func (e *Entry) Expired(now time.Time) bool {
	return e.ExpiresAt != nil && !now.Before(*e.ExpiresAt)
}

// MaxAge returns how long a client may keep the entry from now: at most limit, and not
// past the publication's expiry or the entry's going stale.
func (e *Entry) MaxAge(now time.Time, limit time.Duration) time.Duration {
	for _, t := range []*time.Time{e.ExpiresAt, e.StaleAt} {
		if t != nil {
			limit = min(limit, t.Sub(now))
		}
	}
	return max(limit, 0)
}

// size is what the entry counts against the byte bound: its body and headers, plus the
// bookkeeping around it.
func (e *Entry) size(key string) int64 {
	n := int64(len(e.Body)+len(e.ContentType)+len(e.ETag)+len(e.Note)+len(e.Owner)) + 3*int64(len(key)) + 256
	for _, h := range e.Header {
		n += int64(len(h[0]) + len(h[1]))
	}
	return n
}

// Reusing returns a copy of e that serves old's bytes: for a load that found old's
// validator unchanged, with e's current expiry, owner and indexing.
func (e *Entry) Reusing(old *Entry) *Entry {
	c := *e
	c.Body, c.Open, c.Size, c.ContentType, c.Encoding, c.ETag, c.Header = old.Body, old.Open, old.Size, old.ContentType, old.Encoding, old.ETag, old.Header
	return &c
}

// refreshed returns a copy of e loaded at t in epoch.
func (e *Entry) refreshed(t time.Time, epoch uint64) *Entry {
	c := *e
	c.loadedAt, c.epoch = t, epoch
	return &c
}

// Cache holds entries up to a total size. It is safe for concurrent use.
type Cache struct {
	maxBytes int64
	maxEntry int64
	fresh    func(loadedAt time.Time) bool
	now      func() time.Time // the clock of expiries (Entry.StaleAt)
	flight   singleflight.Group

	mu      sync.Mutex
	bytes   int64
	order   *list.List // Front: most recently used.
	items   map[string]*list.Element
	byNote  map[string]map[string]struct{}
	byOwner map[string]map[string]struct{}
	// epoch counts drops, and dropped holds the epoch of each publication's and owner's
	// latest drop: a load that began before a drop of its publication or owner is
	// answered but not stored, since it may have read the state from before the change.
	// Loads that began before floor are not stored either: dropped is cleared there to
	// stay small.
	epoch   uint64
	floor   uint64
	dropped map[string]uint64

	hits, misses prometheus.Counter
}

type item struct {
	key   string
	entry *Entry
	size  int64
	// dropped entries are never served; a load may still reuse their bytes when it finds
	// that what they show has not changed (a preview after a content-only edit).
	dropped bool
}

// New returns a cache of at most maxBytes (0 disables storing; loads still run once per
// key at a time). fresh decides whether an entry loaded at a time (by the wall clock)
// may be served now (changefeed.Feed.Fresh); now is the clock that expiries are read by
// (the edges' clock); its metrics register on reg.
func New(maxBytes int64, fresh func(loadedAt time.Time) bool, now func() time.Time, reg prometheus.Registerer) *Cache {
	c := &Cache{maxBytes: maxBytes, maxEntry: maxBytes / 16, fresh: fresh, now: now, order: list.New(),
		items: map[string]*list.Element{}, dropped: map[string]uint64{}, byNote: map[string]map[string]struct{}{}, byOwner: map[string]map[string]struct{}{},
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "sharenote_readcache_hits_total",
			Help: "Public reads answered from the per-process cache."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "sharenote_readcache_loads_total",
			Help: "Public reads that loaded from the database: new, dropped or stale entries (one load per key at a time)."}),
	}
	reg.MustRegister(c.hits, c.misses,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sharenote_readcache_bytes", Help: "Size of the cached public reads."},
			func() float64 { c.mu.Lock(); defer c.mu.Unlock(); return float64(c.bytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sharenote_readcache_entries", Help: "Number of cached public reads."},
			func() float64 { c.mu.Lock(); defer c.mu.Unlock(); return float64(c.order.Len()) }))
	return c
}

// Get returns the fresh entry of key.
func (c *Cache) Get(key string) (*Entry, bool) {
	e, _ := c.lookup(key)
	if e == nil {
		return nil, false
	}
	c.hits.Inc()
	return e, true
}

// lookup returns the fresh entry of key, or nil and the stale one (nil when none).
func (c *Cache) lookup(key string) (fresh, stale *Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, nil
	}
	it := el.Value.(*item)
	e := it.entry
	if it.dropped || !c.fresh(e.loadedAt) || (e.NotFound && time.Since(e.loadedAt) >= NegativeTTL) ||
		(e.StaleAt != nil && !c.now().Before(*e.StaleAt)) {
		return nil, e
	}
	c.order.MoveToFront(el)
	return e, nil
}

// Load returns the fresh entry of key, or loads it: once per key at a time, detached
// from ctx (other readers may wait for the same load), and stored unless a drop of its
// publication or owner happened while it ran. load receives the stale or dropped entry
// of key (nil when none), whose bytes it may reuse (Entry.Reusing).
func (c *Cache) Load(ctx context.Context, key string, load func(ctx context.Context, stale *Entry) (*Entry, error)) (*Entry, error) {
	if e, ok := c.Get(key); ok {
		return e, nil
	}
	ch := c.flight.DoChan(key, func() (any, error) {
		fresh, stale := c.lookup(key)
		if fresh != nil {
			return fresh, nil
		}
		c.misses.Inc()
		c.mu.Lock()
		epoch := c.epoch
		c.mu.Unlock()
		start := time.Now()
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		e, err := load(lctx, stale)
		if err != nil {
			return nil, err
		}
		e = e.refreshed(start, epoch)
		c.put(key, e)
		return e, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*Entry), nil
	}
}

// Derive returns the entry of key made from base by derive (a compressed variant whose
// validator is etag), storing it unless base was dropped meanwhile. A stale entry of key
// with that validator is kept rather than made again.
func (c *Cache) Derive(key string, base *Entry, etag string, derive func(*Entry) *Entry) *Entry {
	fresh, stale := c.lookup(key)
	if fresh != nil {
		return fresh
	}
	var e *Entry
	if stale != nil && stale.ETag == etag {
		e = base.Reusing(stale)
	} else {
		e = derive(base)
	}
	e = e.refreshed(base.loadedAt, base.epoch)
	c.put(key, e)
	return e
}

// put stores e under key unless its publication or owner was dropped since its load
// began, or it is too large.
func (c *Cache) put(key string, e *Entry) {
	size := e.size(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.epoch < c.floor || c.dropped[e.Note] > e.epoch || c.dropped[e.Owner] > e.epoch || size > c.maxEntry {
		return
	}
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	c.items[key] = c.order.PushFront(&item{key: key, entry: e, size: size})
	c.bytes += size
	index(c.byNote, e.Note, key)
	index(c.byOwner, e.Owner, key)
	for c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func index(m map[string]map[string]struct{}, id, key string) {
	if id == "" {
		return
	}
	keys, ok := m[id]
	if !ok {
		keys = map[string]struct{}{}
		m[id] = keys
	}
	keys[key] = struct{}{}
}

func unindex(m map[string]map[string]struct{}, id, key string) {
	if keys, ok := m[id]; ok {
		delete(keys, key)
		if len(keys) == 0 {
			delete(m, id)
		}
	}
}

func (c *Cache) remove(el *list.Element) {
	it := c.order.Remove(el).(*item)
	delete(c.items, it.key)
	c.bytes -= it.size
	unindex(c.byNote, it.entry.Note, it.key)
	unindex(c.byOwner, it.entry.Owner, it.key)
}

// Drop makes stale what e changed: every entry of a publication (Note) or of an owner
// (Account). They are never served again; the next load may reuse their bytes when its
// validator shows nothing they show changed. Loads running meanwhile are not stored.
func (c *Cache) Drop(e changefeed.Event) {
	var byID map[string]map[string]struct{}
	switch e.Kind {
	case changefeed.Note:
		byID = c.byNote
	case changefeed.Account:
		byID = c.byOwner
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	if len(c.dropped) >= maxDropped {
		clear(c.dropped)
		c.floor = c.epoch
	}
	c.dropped[e.ID] = c.epoch
	for key := range byID[e.ID] {
		c.items[key].Value.(*item).dropped = true
	}
}

// maxDropped bounds the drops remembered for loads in flight.
const maxDropped = 4096
