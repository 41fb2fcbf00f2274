package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// syncInline charges n requests to k and returns Redis's TAT as an offset from its now.
// The request's cancellation does not cut it short: the sync carries other requests too.
func (b *Batched) syncInline(ctx context.Context, k bkey, iv int64, n int) (int64, error) {
	b.inlineSyncs.Inc()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.syncTimeout)
	defer cancel()
	off, err := parseOffset(chargeScript.Run(ctx, b.rdb, []string{b.redisKey(k)}, time.Duration(iv).Seconds(), n))
	if err != nil {
		b.failed(err)
		return 0, err
	}
	b.down.Store(false)
	return off, nil
}

// allowUntracked decides a key that finds its shard full, as the Redis limiter does.
func (b *Batched) allowUntracked(ctx context.Context, k bkey, l Limit) (Result, error) {
	if b.down.Load() {
		b.errors.Inc()
		return Result{Allowed: true}, nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	b.overflowSyncs.Inc()
	sctx, cancel := context.WithTimeout(ctx, b.syncTimeout)
	defer cancel()
	res, err := b.overflow.Allow(sctx, b.prefix+k.name+":"+k.key, redis_rate.Limit{Rate: l.Rate, Burst: l.Rate, Period: l.Period})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Result{}, ctxErr
		}
		b.failed(err)
		return Result{Allowed: true}, nil
	}
	b.down.Store(false)
	return Result{Allowed: res.Allowed > 0, RetryAfter: res.RetryAfter}, nil
}

// run is the flusher: it flushes once per flush interval until Close.
func (b *Batched) run() {
	defer close(b.stopped)
	t := time.NewTicker(b.flushEvery)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			_ = b.flush(context.Background()) // Failures are counted and logged by failed.
		}
	}
}

// flushItem is one key of a flush: what was charged and what Redis answered.
type flushItem struct {
	sh  *shard
	e   *entry
	k   bkey
	iv  int64
	n   int
	cmd *redis.Cmd
	off int64
	err error
}

// flush syncs every key with pending requests that has no sync in flight, and forgets the
// keys whose view has fully recovered. It stops sending at the first failed pipeline:
// Redis is then down, and the remaining keys keep their requests pending.
func (b *Batched) flush(ctx context.Context) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()

	items := b.items[:0]
	var waits []chan struct{}
	for i := range b.shards {
		sh := &b.shards[i]
		sh.mu.Lock()
		now := b.clock()
		for k, e := range sh.m {
			if e.wait != nil {
				continue
			}
			if e.tat <= now && (e.pending == 0 || e.outage) {
				// A full burst is the same as a key never seen. Requests still pending
				// after a failed sync would be charged nothing on a recovered view (see
				// charge), so an outage does not keep such keys either.
				delete(sh.m, k)
				continue
			}
			if e.pending == 0 {
				continue
			}
			if len(items)%flushBatch == 0 {
				waits = append(waits, make(chan struct{}))
			}
			e.wait = waits[len(waits)-1]
			items = append(items, flushItem{sh: sh, e: e, k: k, iv: e.iv, n: b.charge(e, now)})
		}
		sh.mu.Unlock()
	}

	var firstErr error
	for i := 0; i < len(items); i += flushBatch {
		batch := items[i:min(i+flushBatch, len(items))]
		if firstErr == nil {
			firstErr = b.exec(ctx, batch)
		} else {
			for j := range batch {
				batch[j].err = firstErr
			}
		}
		for _, it := range batch {
			b.settle(it.sh, it.e, it.n, it.off, it.err)
		}
		close(waits[i/flushBatch])
	}
	clear(items) // Drop the references to entries the table may forget.
	b.items = items[:0]
	return firstErr
}

// exec sends one pipeline of charges and records each key's answer in its item.
func (b *Batched) exec(ctx context.Context, batch []flushItem) error {
	b.flushSyncs.Inc()
	ctx, cancel := context.WithTimeout(ctx, b.flushTimeout)
	defer cancel()
	send := func(only func(*flushItem) bool) {
		_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j := range batch {
				if it := &batch[j]; only(it) {
					it.cmd = chargeScript.EvalSha(ctx, p, []string{b.redisKey(it.k)}, time.Duration(it.iv).Seconds(), it.n)
				}
			}
			return nil
		})
	}
	noScript := func(it *flushItem) bool { return redis.HasErrorPrefix(it.cmd.Err(), "NOSCRIPT") }
	send(func(*flushItem) bool { return true })
	for j := range batch {
		// A Redis that restarted or never saw the script refuses EVALSHA without running
		// it; such keys are sent again once the script is loaded.
		if noScript(&batch[j]) {
			if err := chargeScript.Load(ctx, b.rdb).Err(); err == nil {
				send(noScript)
			}
			break
		}
	}
	var firstErr error
	for j := range batch {
		it := &batch[j]
		it.off, it.err = parseOffset(it.cmd)
		if it.err != nil && firstErr == nil {
			firstErr = it.err
		}
	}
	if firstErr != nil {
		b.failed(firstErr)
		return firstErr
	}
	b.down.Store(false)
	return nil
}

// failed counts a failed round trip and marks Redis down.
func (b *Batched) failed(err error) {
	b.errors.Inc()
	b.markDown(err)
}

// markDown makes requests decide locally until a round trip succeeds, and logs the outage
// at most once a minute.
func (b *Batched) markDown(err error) {
	if b.down.Swap(true) {
		return
	}
	now := time.Now().UnixNano()
	if last := b.lastLog.Load(); now-last >= int64(time.Minute) && b.lastLog.CompareAndSwap(last, now) {
		b.log.Warn("rate limiter cannot reach redis, limiting per process", "err", err)
	}
}

// redisKey is the key redis_rate uses for the same counter, so that Redis and Batched
// limiters on one prefix share it.
func (b *Batched) redisKey(k bkey) string {
	return "rate:" + b.prefix + k.name + ":" + k.key
}

// parseOffset reads the answer of chargeScript: the TAT minus now, in seconds.
func parseOffset(cmd *redis.Cmd) (int64, error) {
	s, err := cmd.Text()
	if err != nil {
		return 0, fmt.Errorf("rate limit sync: %w", err)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("rate limit sync: %w", err)
	}
	return int64(f * float64(time.Second)), nil
}

// chargeScript adds ARGV[2] requests to the TAT of KEYS[1] for an emission interval of
// ARGV[1] seconds, without refusing any: they were admitted already, and a TAT past the
// burst makes later requests wait for the excess. It returns the TAT minus now, in
// seconds. The TAT is stored as redis_rate stores it (seconds since 2017-01-01 on Redis's
// clock, expiring when it has passed), so both limiters read each other's counters.
var chargeScript = redis.NewScript(`
redis.replicate_commands()
local interval = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local t = redis.call("TIME")
local now = (t[1] - 1483228800) + (t[2] / 1000000)
local tat = tonumber(redis.call("GET", KEYS[1])) or now
if tat < now then
  tat = now
end
if n > 0 then
  tat = tat + n * interval
  redis.call("SET", KEYS[1], tat, "EX", math.ceil(tat - now))
end
return tostring(tat - now)
`)
