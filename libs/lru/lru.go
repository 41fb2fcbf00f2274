// Package lru is a small least-recently-used cache bounded both by the number of entries
// and by the total size of their values. It caches rendered output (note pages, preview
// PNGs). It is hand-written on container/list because the services need only Get and Add
// and a size bound, which the common LRU libraries do not offer.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps keys to values. It is safe for concurrent use. Values are shared, not
// copied: callers must not modify a value after adding it or one they got.
type Cache[V any] struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int64
	size       func(V) int64
	bytes      int64
	order      *list.List // Front is the most recently used.
	items      map[string]*list.Element
}

type entry[V any] struct {
	key   string
	value V
	size  int64
}

// New returns a cache of at most maxEntries entries whose values, measured by size, hold
// at most maxBytes bytes in all.
func New[V any](maxEntries int, maxBytes int64, size func(V) int64) *Cache[V] {
	return &Cache[V]{maxEntries: maxEntries, maxBytes: maxBytes, size: size, order: list.New(), items: map[string]*list.Element{}}
}

// Bytes returns the size of b: the size function of a cache of byte slices.
func Bytes(b []byte) int64 { return int64(len(b)) }

// Get returns the value of key and marks it as the most recently used.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[V]).value, true
}

// Add stores value under key as the most recently used entry and evicts the least
// recently used ones beyond the bounds. A value larger than the whole byte bound is not
// stored.
func (c *Cache[V]) Add(key string, value V) {
	size := c.size(value)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	if size > c.maxBytes || c.maxEntries <= 0 {
		return
	}
	c.items[key] = c.order.PushFront(&entry[V]{key: key, value: value, size: size})
	c.bytes += size
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *Cache[V]) remove(el *list.Element) {
	e := c.order.Remove(el).(*entry[V])
	delete(c.items, e.key)
	c.bytes -= e.size
}

// Len returns the number of entries.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Size returns the total size of the values.
func (c *Cache[V]) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
