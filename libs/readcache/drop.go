package readcache

import "github.com/sharenote/sharenote/libs/changefeed"

// Drop makes stale what e changed: every entry of a publication (Note), of an owner
// (Account), or every entry (Everything). They are never served again; the next load may
// reuse their bytes when its validator shows nothing they show changed. Loads running
// meanwhile are stored dropped too (put).
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
	ch := &change{}
	for key := range byID[e.ID] {
		it := c.items[key].Value.(*item)
		it.dropped = true
		c.follow(it, ch)
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
