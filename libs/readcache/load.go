package readcache

import (
	"context"
	"time"
)

// loadTimeout bounds one load, which runs detached from the request that started it
// because other readers may be waiting for it.
const loadTimeout = 10 * time.Second

// Load returns the fresh entry of key, or loads it: once per key at a time, detached
// from ctx (other readers may wait for the same load), and stored (dropped, when a drop
// of its publication or owner happened while it ran: put). load receives the stale or dropped entry
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
		if stale != nil {
			c.settleLoad(key, stale, e)
		}
		e = e.refreshed(start, epoch, true)
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
// validator is etag), storing it (dropped, when base was dropped meanwhile: put). A stale entry of key
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
	e = e.refreshed(base.loadedAt, base.epoch, false)
	c.put(key, e)
	return e
}
