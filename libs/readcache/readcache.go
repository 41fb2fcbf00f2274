// Package readcache is the per-process cache of public reads (docs/api.md "Caching and
// invalidation", docs/read-path.md): the final bytes of a note's JSON, its page, its
// preview PNG and its images, each with its validator and content encoding, so that a
// read of a cached note costs no database query, no Redis command and no rendering.
//
// Entries are keyed by route, cuid and encoding (the caller builds the key), bounded by
// their total size, and dropped by the change feed's events: a Note event drops every
// entry of that publication and every page that embeds it (Entry.Embeds), an Account
// event every entry of that owner, an Everything event every entry. An entry is served
// only while it is fresh (changefeed.Feed.Fresh): the feed vouches that no change has
// been missed since it was loaded, or it is younger than a second. A stale entry is re-checked by one load per key at a time, however many
// readers ask, and is kept (with its compressed variants) when the re-check finds the
// same validator.
//
// An entry may take up to a sixteenth of the cache. A larger text body (a note of "<",
// each escaped to six bytes of JSON) is kept gzip-compressed when that fits, and
// unpacked as it is written to the rare client that takes no compression; its gzip and
// brotli variants are made from it once and held as usual. Negative entries ("not
// there") live NegativeTTL, are removed then, and have a bound of their own (a 64th of
// the cache), so that requests for random cuids cannot evict the entries of real
// publications.
//
// Files: readcache.go holds the Cache, its lookup and its storing and eviction; entry.go
// the Entry and how a large body is kept compressed; negative.go the negative entries'
// bound and expiry; load.go the loads (Load, Derive); drop.go the drops by the change
// feed's events.
package readcache

import (
	"container/list"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
)

// Cache holds entries up to a total size. It is safe for concurrent use.
type Cache struct {
	maxBytes int64
	maxEntry int64
	// maxNegative bounds the bytes of the negative entries, and maxBytes-maxNegative those
	// of the others.
	maxNegative int64
	fresh       func(loadedAt time.Time) bool
	now         func() time.Time // the clock of expiries (Entry.StaleAt)
	flight      singleflight.Group

	mu    sync.Mutex
	bytes int64
	order *list.List // Entries of publications; front: most recently used.
	// negatives are the negative entries, newest in front, and their bytes (included in
	// bytes); sweeping is set while a timer will remove the expired ones.
	negatives     *list.List
	negativeBytes int64
	sweeping      bool
	items         map[string]*list.Element
	byNote        map[string]map[string]struct{}
	byOwner       map[string]map[string]struct{}
	// epoch counts drops, and dropped holds the epoch of each publication's and owner's
	// latest drop: a load that began before a drop of its publication or owner is
	// answered but stored dropped, since it may have read the state from before the
	// change. So are loads that began before floor: dropped is cleared there to stay small.
	epoch   uint64
	floor   uint64
	dropped map[string]uint64

	hits, misses     prometheus.Counter
	rebuiltPerChange prometheus.Histogram
}

type item struct {
	key   string
	entry *Entry
	size  int64
	// dropped entries are never served; a load may still reuse their bytes when it finds
	// that what they show has not changed (a preview after a content-only edit).
	dropped bool
	// change is the change whose rebuilds the entry, a page it made stale, awaits
	// (rebuilds.go).
	change *change
}

// New returns a cache of at most maxBytes (0 disables storing; loads still run once per
// key at a time). fresh decides whether an entry loaded at a time (by the wall clock)
// may be served now (changefeed.Feed.Fresh); now is the clock that expiries are read by
// (the edges' clock); its metrics register on reg.
func New(maxBytes int64, fresh func(loadedAt time.Time) bool, now func() time.Time, reg prometheus.Registerer) *Cache {
	c := &Cache{maxBytes: maxBytes, maxEntry: maxBytes / 16, maxNegative: maxBytes / 64, fresh: fresh, now: now,
		order: list.New(), negatives: list.New(),
		items: map[string]*list.Element{}, dropped: map[string]uint64{}, byNote: map[string]map[string]struct{}{}, byOwner: map[string]map[string]struct{}{},
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "sharenote_readcache_hits_total",
			Help: "Public reads answered from the per-process cache."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "sharenote_readcache_loads_total",
			Help: "Public reads that loaded from the database: new, dropped or stale entries (one load per key at a time)."}),
		rebuiltPerChange: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sharenote_page_rebuilds_per_change",
			Help:    "Per change this process heard of that made cached pages built from other notes stale: how many of those pages were rebuilt (each at most once, when next read), observed once each was read again, changed again or evicted.",
			Buckets: []float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}}),
	}
	reg.MustRegister(c.hits, c.misses, c.rebuiltPerChange,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sharenote_readcache_bytes", Help: "Size of the cached public reads."},
			func() float64 { c.mu.Lock(); defer c.mu.Unlock(); return float64(c.bytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sharenote_readcache_entries", Help: "Number of cached public reads."},
			func() float64 { c.mu.Lock(); defer c.mu.Unlock(); return float64(c.order.Len() + c.negatives.Len()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sharenote_readcache_negative_entries",
			Help: "Number of cached \"not there\" answers (among the entries): they live 5 s, within a 64th of the cache of their own."},
			func() float64 { c.mu.Lock(); defer c.mu.Unlock(); return float64(c.negatives.Len()) }))
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
	if !e.NotFound {
		c.order.MoveToFront(el)
	}
	return e, nil
}

// put stores e under key unless it is too large (kept compressed when that makes it fit);
// dropped, when its publication, owner or an embedded note was dropped since its load began.
func (c *Cache) put(key string, e *Entry) {
	size := e.size(key)
	if size > c.maxEntry && e.packable() && !e.NotFound {
		e = e.pack()
		size = e.size(key)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// A load that began before a drop of what it shows may have read the state from before
	// the change: it is kept dropped, never served, and the next load reuses its bytes
	// only if they show the state after the change (a rebuild that raced the change's own
	// drop is not done twice).
	dropped := e.epoch < c.floor || c.dropped[e.Note] > e.epoch || c.dropped[e.Owner] > e.epoch ||
		slices.ContainsFunc(e.Embeds, func(id string) bool { return c.dropped[id] > e.epoch })
	if size > c.maxEntry || dropped && e.NotFound {
		return
	}
	if el, ok := c.items[key]; ok {
		if dropped && !el.Value.(*item).dropped {
			return // What is there was stored after the drop.
		}
		c.remove(el)
	}
	it := &item{key: key, entry: e, size: size, dropped: dropped}
	c.bytes += size
	index(c.byNote, e.Note, key)
	index(c.byOwner, e.Owner, key)
	for _, id := range e.Embeds {
		index(c.byNote, id, key)
	}
	if e.NotFound {
		c.putNegative(it)
		return
	}
	c.items[key] = c.order.PushFront(it)
	for c.bytes-c.negativeBytes > c.maxBytes-c.maxNegative {
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
	it := el.Value.(*item)
	if it.entry.NotFound {
		c.negatives.Remove(el)
		c.negativeBytes -= it.size
	} else {
		c.order.Remove(el)
	}
	delete(c.items, it.key)
	c.settle(it, false)
	c.bytes -= it.size
	unindex(c.byNote, it.entry.Note, it.key)
	unindex(c.byOwner, it.entry.Owner, it.key)
	for _, id := range it.entry.Embeds {
		unindex(c.byNote, id, it.key)
	}
}
