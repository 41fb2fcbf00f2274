package ratelimit

import (
	"context"
	"fmt"
	"slices"
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
	offs, err := parseOffsets(chargeScript.Run(ctx, b.rdb, []string{b.redisKey(k)}, time.Duration(iv).Seconds(), n), 1)
	if err != nil {
		b.failed(err)
		return 0, err
	}
	b.down.Store(false)
	return offs[0], nil
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

// exec sends one pipeline of charges, a script call for every scriptKeys keys, and
// records each key's answer in its item. A call that fails fails all its keys; one that
// failed part way (Redis out of memory) has charged the keys before the failure, which
// are charged again later, up to what their views hold (charge): stricter, never looser.
func (b *Batched) exec(ctx context.Context, batch []flushItem) error {
	b.flushSyncs.Inc()
	ctx, cancel := context.WithTimeout(ctx, b.flushTimeout)
	defer cancel()
	calls := make([]*redis.Cmd, (len(batch)+scriptKeys-1)/scriptKeys)
	part := func(c int) []flushItem { return batch[c*scriptKeys : min((c+1)*scriptKeys, len(batch))] }
	send := func(only func(*redis.Cmd) bool) {
		_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for c := range calls {
				if !only(calls[c]) {
					continue
				}
				items := part(c)
				keys, args := make([]string, len(items)), make([]any, 0, 2*len(items))
				for j, it := range items {
					keys[j] = b.redisKey(it.k)
					args = append(args, time.Duration(it.iv).Seconds(), it.n)
				}
				calls[c] = chargeScript.EvalSha(ctx, p, keys, args...)
			}
			return nil
		})
	}
	noScript := func(cmd *redis.Cmd) bool { return redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") }
	send(func(*redis.Cmd) bool { return true })
	if slices.ContainsFunc(calls, noScript) {
		// A Redis that restarted or never saw the script refuses EVALSHA without running
		// it; such calls are sent again once the script is loaded.
		if err := chargeScript.Load(ctx, b.rdb).Err(); err == nil {
			send(noScript)
		}
	}
	var firstErr error
	for c, cmd := range calls {
		items := part(c)
		offs, err := parseOffsets(cmd, len(items))
		for j := range items {
			items[j].err = err
			if err == nil {
				items[j].off = offs[j]
			}
		}
		if err != nil && firstErr == nil {
			firstErr = err
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

// parseOffsets reads the answer of chargeScript for n keys: each key's TAT minus now, in
// seconds.
func parseOffsets(cmd *redis.Cmd, n int) ([]int64, error) {
	ss, err := cmd.StringSlice()
	if err == nil && len(ss) != n {
		err = fmt.Errorf("%d answers for %d keys", len(ss), n)
	}
	if err != nil {
		return nil, fmt.Errorf("rate limit sync: %w", err)
	}
	offs := make([]int64, n)
	for i, s := range ss {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("rate limit sync: %w", err)
		}
		offs[i] = int64(f * float64(time.Second))
	}
	return offs, nil
}

// chargeScript charges each key KEYS[i] with ARGV[2i] requests on its TAT, for an
// emission interval of ARGV[2i-1] seconds, without refusing any: they were admitted
// already, and a TAT past the burst makes later requests wait for the excess. It returns
// each TAT minus now, in seconds, in the order of KEYS. A TAT is stored as redis_rate
// stores it (seconds since 2017-01-01 on Redis's clock, expiring when it has passed), so
// both limiters read each other's counters. The keys of one call may lie anywhere: the
// limiter runs on one Redis, not a cluster.
//
// One call charges many keys because a call's own cost outweighed a key's: flushing new
// keys on Redis 7 took 5.5 µs of Redis's CPU a key at one call a key, 4.2 µs at a
// hundred, and no less at a thousand. The flusher sends at most scriptKeys keys a call
// (some 0.4 ms of Redis's time, during which it serves nothing else), and several calls
// in one pipeline.
var chargeScript = redis.NewScript(`
redis.replicate_commands()
local t = redis.call("TIME")
local now = (t[1] - 1483228800) + (t[2] / 1000000)
local offsets = {}
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2 * i - 1])
  local n = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call("GET", key)) or now
  if tat < now then
    tat = now
  end
  if n > 0 then
    tat = tat + n * interval
    redis.call("SET", key, tat, "EX", math.ceil(tat - now))
  end
  offsets[i] = tostring(tat - now)
end
return offsets
`)

// scriptKeys is the most keys the flusher charges in one call of chargeScript.
const scriptKeys = 100
