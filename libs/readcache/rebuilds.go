package readcache

// A change of a publication or an account that makes pages built from other notes
// stale (entries Load took that carry Unchanged) is followed until every page it made
// stale has been loaded again, made stale by a later change, or evicted; then how many
// of them were rebuilt (loaded without their re-check keeping them) is observed in the
// rebuilds-per-change histogram. A page nobody reads after a change is never rebuilt:
// it counts as not rebuilt once a later change or the eviction settles it. Changes this
// process does not hear of (another process's, on the embedded default) are not
// followed, and neither is a drop of everything.

// change is one drop's pages: how many still await a load, and how many of the others
// were rebuilt.
type change struct{ stale, rebuilt int }

// follow makes ch the change that it awaits when it holds a page, settling the change
// it awaited before as not rebuilt.
func (c *Cache) follow(it *item, ch *change) {
	if !it.entry.loaded || it.entry.Unchanged == nil {
		return
	}
	c.settle(it, false)
	it.change = ch
	ch.stale++
}

// settle ends it's wait for its change, rebuilt or not, and observes the change once
// none of its pages waits.
func (c *Cache) settle(it *item, rebuilt bool) {
	ch := it.change
	if ch == nil {
		return
	}
	it.change = nil
	if rebuilt {
		ch.rebuilt++
	}
	if ch.stale--; ch.stale == 0 {
		c.rebuiltPerChange.Observe(float64(ch.rebuilt))
	}
}

// settleLoad settles the change that key's stale entry awaited, after a load from it
// gave e.
func (c *Cache) settleLoad(key string, stale, e *Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok && el.Value.(*item).entry == stale {
		c.settle(el.Value.(*item), !e.kept)
	}
}
