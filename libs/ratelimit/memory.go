package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Memory is the in-process GCRA limiter of the embedded default. It holds one theoretical
// arrival time (TAT) per key, exactly as redis_rate does in Redis, so both backends admit
// the same requests. It is right only for a single process.
type Memory struct {
	now   func() time.Time
	mu    sync.Mutex
	tat   map[string]time.Time
	calls int
}

// sweepEvery is how many calls pass between sweeps of keys that have fully recovered.
const sweepEvery = 4096

// NewMemory returns an in-process limiter reading time from now (time.Now when nil).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, tat: make(map[string]time.Time)}
}

// Allow implements Limiter.
func (m *Memory) Allow(_ context.Context, key string, l Limit) (Result, error) {
	interval := l.Interval()
	now := m.now()
	k := l.Name + ":" + key

	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	tat := m.tat[k]
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(interval)
	allowAt := next.Add(-interval * time.Duration(l.Rate))
	if now.Before(allowAt) {
		return Result{RetryAfter: allowAt.Sub(now), Known: true, ResetAfter: tat.Sub(now)}, nil
	}
	m.tat[k] = next
	// As redis_rate: the whole intervals by which now is past allowAt are the requests
	// still allowed now, and the key is back at a full burst when its TAT has passed.
	return Result{Allowed: true, Known: true, Remaining: int(now.Sub(allowAt) / interval), ResetAfter: next.Sub(now)}, nil
}

// sweep forgets keys whose TAT has passed: they are back at a full burst, which is what a
// missing key means, so memory stays bounded by the keys active in the last period.
func (m *Memory) sweep(now time.Time) {
	m.calls++
	if m.calls%sweepEvery != 0 {
		return
	}
	for k, tat := range m.tat {
		if !tat.After(now) {
			delete(m.tat, k)
		}
	}
}
