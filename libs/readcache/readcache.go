// Package readcache is the per-process cache of public reads (CONTRACT.md "Caching and
// invalidation"): the final bytes of a note's JSON, its page, its preview PNG and its
// images, each with its validator and content encoding, so that a read of a cached note
// costs no database query, no Redis command and no rendering.
//
// Entries are keyed by route, cuid and encoding (the caller builds the key), bounded by
// their total size, and dropped by the change feed's events: a Note event drops every
// entry of that publication, an Account event every entry of that owner, an Everything
// event every entry. An entry is served only while it is fresh (changefeed.Feed.Fresh):
// the feed vouches that no change has been missed since it was loaded, or it is younger
// than a second. A stale entry is re-checked by one load per key at a time, however many
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
package readcache

import (
	"bytes"
	"compress/gzip"
	"container/list"
	"context"
	"fmt"
	"io"
	"strings"
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
	// large to hold (or held compressed by the cache): Body is then nil and Size is the
	// body's length.
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
	// packed is the body gzip-compressed, for an entry the cache keeps compressed; Open
	// then unpacks it.
	packed []byte
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
	n := int64(len(e.Body)+len(e.packed)+len(e.ContentType)+len(e.ETag)+len(e.Note)+len(e.Owner)) + 3*int64(len(key)) + 256
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
	c.packed = old.packed
	return &c
}

// Len is the length of the body, held or streamed.
func (e *Entry) Len() int64 {
	if e.Body == nil && e.Open != nil {
		return e.Size
	}
	return int64(len(e.Body))
}

// WriteBody writes the whole body to w: the held bytes, or those Open streams (a body
// the cache keeps compressed is unpacked on the way).
func (e *Entry) WriteBody(ctx context.Context, w io.Writer) (int64, error) {
	if e.Body != nil || e.Open == nil {
		n, err := w.Write(e.Body)
		return int64(n), err
	}
	rc, err := e.Open(ctx, 0, -1)
	if err != nil {
		return 0, err
	}
	defer func() { _ = rc.Close() }()
	return io.Copy(w, rc)
}

// packable reports whether e is a body worth keeping compressed when it is too large to
// keep as it is: text not compressed yet.
func (e *Entry) packable() bool {
	t := e.ContentType
	return e.Body != nil && e.Encoding == "" &&
		(strings.HasPrefix(t, "text/") || strings.Contains(t, "json") || strings.Contains(t, "xml") || strings.Contains(t, "javascript"))
}

// pack returns a copy of e that holds its body gzip-compressed and streams it unpacked.
// Fast compression: it runs in the load that readers wait for.
func (e *Entry) pack() *Entry {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = w.Write(e.Body)
	_ = w.Close()
	c := *e
	packed := bytes.Clone(buf.Bytes())
	c.Body, c.Size, c.packed = nil, int64(len(e.Body)), packed
	c.Open = func(_ context.Context, off, n int64) (io.ReadCloser, error) { return unpack(packed, off, n) }
	return &c
}

// unpack streams n bytes (n < 0: all) from offset off of the body packed.
func unpack(packed []byte, off, n int64) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, fmt.Errorf("unpack cached body: %w", err)
	}
	if _, err := io.CopyN(io.Discard, zr, off); err != nil {
		return nil, fmt.Errorf("unpack cached body: %w", err)
	}
	if n < 0 {
		return zr, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(zr, n), zr}, nil
}

// unpacked returns a copy of e that holds its body, for making variants of it.
func (e *Entry) unpacked() (*Entry, error) {
	if e.packed == nil {
		return e, nil
	}
	c := *e
	var buf bytes.Buffer
	buf.Grow(int(e.Size))
	if _, err := e.WriteBody(context.Background(), &buf); err != nil {
		return nil, err
	}
	c.Body, c.Open, c.Size, c.packed = buf.Bytes(), nil, 0, nil
	return &c, nil
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
	c := &Cache{maxBytes: maxBytes, maxEntry: maxBytes / 16, maxNegative: maxBytes / 64, fresh: fresh, now: now,
		order: list.New(), negatives: list.New(),
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
		whole, err := base.unpacked()
		if err != nil {
			return base // Served as it is, in no encoding.
		}
		e = derive(whole)
	}
	e = e.refreshed(base.loadedAt, base.epoch)
	c.put(key, e)
	return e
}

// put stores e under key unless its publication or owner was dropped since its load
// began, or it is too large (kept compressed when that makes it fit).
func (c *Cache) put(key string, e *Entry) {
	size := e.size(key)
	if size > c.maxEntry && e.packable() && !e.NotFound {
		e = e.pack()
		size = e.size(key)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.epoch < c.floor || c.dropped[e.Note] > e.epoch || c.dropped[e.Owner] > e.epoch || size > c.maxEntry {
		return
	}
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	it := &item{key: key, entry: e, size: size}
	c.bytes += size
	index(c.byNote, e.Note, key)
	index(c.byOwner, e.Owner, key)
	if e.NotFound {
		c.items[key] = c.negatives.PushFront(it)
		c.negativeBytes += size
		for c.negativeBytes > c.maxNegative {
			c.remove(c.negatives.Back())
		}
		if !c.sweeping && c.negatives.Len() > 0 {
			c.sweeping = true
			time.AfterFunc(c.untilExpiry(), c.sweep)
		}
		return
	}
	c.items[key] = c.order.PushFront(it)
	for c.bytes-c.negativeBytes > c.maxBytes-c.maxNegative {
		c.remove(c.order.Back())
	}
}

// untilExpiry is the time until the oldest negative entry expires; the caller holds mu.
func (c *Cache) untilExpiry() time.Duration {
	e := c.negatives.Back().Value.(*item).entry
	return max(NegativeTTL-time.Since(e.loadedAt), 10*time.Millisecond)
}

// sweep removes the expired negative entries, and comes back when the next expires.
func (c *Cache) sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.negatives.Back(); el != nil && time.Since(el.Value.(*item).entry.loadedAt) >= NegativeTTL; el = c.negatives.Back() {
		c.remove(el)
	}
	if c.negatives.Len() == 0 {
		c.sweeping = false
		return
	}
	time.AfterFunc(c.untilExpiry(), c.sweep)
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
	c.bytes -= it.size
	unindex(c.byNote, it.entry.Note, it.key)
	unindex(c.byOwner, it.entry.Owner, it.key)
}

// Drop makes stale what e changed: every entry of a publication (Note), of an owner
// (Account), or every entry (Everything). They are never served again; the next load may
// reuse their bytes when its validator shows nothing they show changed. Loads running
// meanwhile are not stored.
func (c *Cache) Drop(e changefeed.Event) {
	var byID map[string]map[string]struct{}
	switch e.Kind {
	case changefeed.Note:
		byID = c.byNote
	case changefeed.Account:
		byID = c.byOwner
	case changefeed.Everything:
		c.dropAll()
		return
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

// dropAll makes every entry stale, and keeps every load running from being stored.
func (c *Cache) dropAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	c.floor = c.epoch
	clear(c.dropped)
	for _, el := range c.items {
		el.Value.(*item).dropped = true
	}
}

// maxDropped bounds the drops remembered for loads in flight.
const maxDropped = 4096
