package ratelimit

import (
	"context"
	"errors"
	"hash/maphash"
	"time"
)

// Allow implements Limiter. Its only errors are ctx's: a request whose client has gone is
// neither decided nor counted.
func (b *Batched) Allow(ctx context.Context, key string, l Limit) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	k := bkey{name: l.Name, key: key}
	sh := &b.shards[maphash.String(b.seed, key)%numShards]
	iv := int64(l.Interval())
	burst := iv * int64(l.Rate)
	chunk := max(1, l.Rate/b.chunkDivisor)

	sh.mu.Lock()
	for {
		now := b.clock()
		// The key is looked up on every pass: the flusher may forget it while this request
		// waits for a sync.
		e := sh.m[k]
		if e == nil {
			if len(sh.m) >= b.maxPerShard {
				sh.mu.Unlock()
				return b.allowUntracked(ctx, k, l)
			}
			e = &entry{tat: now}
			sh.m[k] = e
		}
		e.iv = iv
		next := max(e.tat, now) + iv
		if allowAt := next - burst; allowAt > now {
			sh.mu.Unlock()
			return Result{RetryAfter: time.Duration(allowAt - now)}, nil
		}
		if e.pending+e.inflight < chunk || b.down.Load() {
			e.tat = next
			e.pending++
			sh.mu.Unlock()
			return Result{Allowed: true}, nil
		}

		// The chunk is spent on the current view: learn Redis's before deciding.
		if err := ctx.Err(); err != nil {
			sh.mu.Unlock()
			return Result{}, err
		}
		if w := e.wait; w != nil {
			sh.mu.Unlock()
			if err := b.await(ctx, w); err != nil {
				return Result{}, err
			}
			sh.mu.Lock()
			continue
		}
		n := b.charge(e, now)
		w := make(chan struct{})
		e.wait = w
		sh.mu.Unlock()
		off, err := b.syncInline(ctx, k, iv, n)
		b.settle(sh, e, n, off, err)
		close(w)
		sh.mu.Lock()
	}
}

// clock is the limiter's time in nanoseconds since its epoch.
func (b *Batched) clock() int64 { return int64(b.now().Sub(b.epoch)) }

// charge moves e's pending requests into a sync and returns how many to charge. After a
// failed sync the requests may span an outage, during which the local view was all the
// limit there was: they are charged only up to what that view still holds.
func (b *Batched) charge(e *entry, now int64) int {
	n := e.pending
	if e.outage {
		held := max(0, (e.tat-now+e.iv-1)/e.iv)
		n = min(n, int(held))
	}
	e.pending = 0
	e.inflight += n
	return n
}

// settle records the outcome of a sync that charged n requests of e: on success the view
// becomes Redis's TAT, off from now, plus the requests admitted while the sync was in
// flight; on failure the requests return to pending.
func (b *Batched) settle(sh *shard, e *entry, n int, off int64, err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e.inflight -= n
	e.wait = nil
	if err != nil {
		e.pending += n
		e.outage = true
		return
	}
	e.tat = b.clock() + max(0, off) + int64(e.pending)*e.iv
	e.outage = false
	e.synced = true
}

// await waits for the sync in flight that will close w. A sync that outlasts the sync
// timeout marks Redis down, so that the request is decided locally rather than held.
func (b *Batched) await(ctx context.Context, w chan struct{}) error {
	t := time.NewTimer(b.syncTimeout)
	defer t.Stop()
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		b.markDown(errors.New("redis did not answer within the sync timeout"))
		return nil
	}
}
