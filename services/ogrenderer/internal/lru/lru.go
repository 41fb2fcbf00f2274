// Package lru is a small least-recently-used cache of byte slices, bounded both by the
// number of entries and by their total size. It is hand-written on container/list
// because the service needs only Get and Add, and a size bound that the common LRU
// libraries do not all offer.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps keys to byte slices. It is safe for concurrent use. Values are shared, not
// copied: callers must not modify a slice after adding it or one they got.
type Cache struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int64
	bytes      int64
	order      *list.List // Front is the most recently used.
	items      map[string]*list.Element
}

type entry struct {
	key   string
	value []byte
}

// New returns a cache of at most maxEntries entries holding at most maxBytes bytes of
// values in all.
func New(maxEntries int, maxBytes int64) *Cache {
	return &Cache{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), items: map[string]*list.Element{}}
}

// Get returns the value of key and marks it as the most recently used.
func (c *Cache) Get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry).value, true
}

// Add stores value under key as the most recently used entry and evicts the least
// recently used ones beyond the bounds. A value larger than the whole byte bound is not
// stored.
func (c *Cache) Add(key string, value []byte) {
	size := int64(len(value))
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	if size > c.maxBytes || c.maxEntries <= 0 {
		return
	}
	c.items[key] = c.order.PushFront(&entry{key: key, value: value})
	c.bytes += size
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *Cache) remove(el *list.Element) {
	e := c.order.Remove(el).(*entry)
	delete(c.items, e.key)
	c.bytes -= int64(len(e.value))
}

// Len returns the number of entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Bytes returns the total size of the values.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
