package ratelimit

import (
	"context"
	"time"
)

// Keys reports how many keys the limiter holds. A swept key behaves exactly like a fresh
// one, so the sweep is only observable through the size of the map.
func (m *Memory) Keys() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tat)
}

// SetTimings replaces the log throttle and the cooldown, so that a test can pass either
// without sleeping. Call it only while no Allow is running.
func (f *FailOpen) SetTimings(logEvery, cooldown time.Duration) {
	f.logEvery, f.cooldown = logEvery, cooldown
}

// Keys reports how many keys the batched limiter holds.
func (b *Batched) Keys() int { return b.size() }

// Flush runs one flush now, as the flusher does every flush interval.
func (b *Batched) Flush(ctx context.Context) error { return b.flush(ctx) }
