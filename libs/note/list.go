package note

import (
	"context"
	"fmt"
	"sync"
)

// History is the owner's view of their notes: the list of them, and the versions of each.
type History struct {
	store HistoryStore

	keyMu     sync.Mutex
	cursorKey []byte
}

// NewHistory returns the History over store.
func NewHistory(store HistoryStore) *History { return &History{store: store} }

// List returns a page of the owner's publications and the cursor of the next page ("" on
// the last page). cursor is "" for the first page.
func (c *History) List(ctx context.Context, accountCUID, cursor string, limit int) ([]Publication, string, error) {
	key, err := c.key(ctx)
	if err != nil {
		return nil, "", err
	}
	var after *Cursor
	if cursor != "" {
		cur, err := DecodeCursor(key, accountCUID, cursor)
		if err != nil {
			return nil, "", err
		}
		after = &cur
	}
	rows, err := c.store.List(ctx, accountCUID, after, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list: %w", err)
	}
	if len(rows) <= limit {
		return rows, "", nil
	}
	rows = rows[:limit]
	last := rows[limit-1]
	return rows, EncodeCursor(key, accountCUID, Cursor{CreatedMS: last.CreatedAt.UnixMilli(), CUID: last.CUID}), nil
}

// key returns the cursor MAC key, loading it once.
func (c *History) key(ctx context.Context) ([]byte, error) {
	c.keyMu.Lock()
	defer c.keyMu.Unlock()
	if c.cursorKey == nil {
		k, err := c.store.CursorKey(ctx)
		if err != nil {
			return nil, fmt.Errorf("cursor key: %w", err)
		}
		c.cursorKey = k
	}
	return c.cursorKey, nil
}
