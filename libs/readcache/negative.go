package readcache

import "time"

// NegativeTTL bounds how long "this publication is not there" is believed. Publishing
// drops the entry through the feed; the bound covers a process that cannot hear it.
const NegativeTTL = 5 * time.Second

// putNegative stores the negative entry it within the negatives' own bound, and starts
// the sweep that removes it when it expires; the caller holds mu.
func (c *Cache) putNegative(it *item) {
	c.items[it.key] = c.negatives.PushFront(it)
	c.negativeBytes += it.size
	for c.negativeBytes > c.maxNegative {
		c.remove(c.negatives.Back())
	}
	if !c.sweeping && c.negatives.Len() > 0 {
		c.sweeping = true
		time.AfterFunc(c.untilExpiry(), c.sweep)
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
