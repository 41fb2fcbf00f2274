package ratelimit

import (
	"cmp"
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
	// fresh is set when no sync of the key has succeeded here: Redis most likely holds
	// no counter for it either (a reader's first request).
	fresh bool
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
			items = append(items, flushItem{sh: sh, e: e, k: k, iv: e.iv, n: b.charge(e, now), fresh: !e.synced})
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
//
// A fresh key is claimed with SET NX at the TAT a counter Redis does not hold gets (now
// plus its requests' intervals), which costs Redis about half what the script does for a
// new key (2.7 against 5.2 µs): most keys of a public read's per-IP limit are readers seen
// once. Its now is Redis's clock as the last flush read it (a TIME at the head of every
// pipeline) carried forward on this machine's clock; a TIME is answered after it was
// asked, so the estimate is late by at most that delay, and a claimed TAT only later,
// which is stricter. A key that exists after all is charged by the script in a second
// round trip. The other keys go to the script, as do all keys of a flush that has no
// reading of Redis's clock younger than maxClockAge (the first, or the first after a
// quiet minute).
//
// A call that fails fails all its keys; one that failed part way (Redis out of memory) has
// charged the keys before the failure, which are charged again later, up to what their
// views hold (charge): stricter, never looser.
func (b *Batched) exec(ctx context.Context, batch []flushItem) error {
	ctx, cancel := context.WithTimeout(ctx, b.flushTimeout)
	defer cancel()
	var claimed, scripted []*flushItem
	clockKnown := b.redisRead != 0 && b.clock()-b.redisRead < maxClockAge
	for i := range batch {
		if it := &batch[i]; clockKnown && it.fresh && it.n > 0 {
			claimed = append(claimed, it)
		} else {
			scripted = append(scripted, it)
		}
	}
	asked := time.Now()
	var clock *redis.TimeCmd
	claims := make([]*redis.BoolCmd, len(claimed))
	err := b.script(ctx, scripted, func(p redis.Pipeliner) {
		clock = p.Time(ctx)
		for i, it := range claimed {
			// The counter lives until its TAT has passed, in whole seconds as the script
			// sets it.
			d := time.Duration(it.n) * time.Duration(it.iv)
			claims[i] = p.SetNX(ctx, b.redisKey(it.k), redisTAT(asked.Add(b.redisAhead+d)), (d + time.Second - 1).Truncate(time.Second))
		}
	})
	if t, err := clock.Result(); err == nil {
		b.redisAhead, b.redisRead = t.Sub(asked), max(1, b.clock()) // 0 stands for never.
	}
	var taken []*flushItem
	for i, it := range claimed {
		switch ok, cerr := claims[i].Result(); {
		case cerr != nil:
			it.err = fmt.Errorf("rate limit sync: %w", cerr)
			err = cmp.Or(err, it.err)
		case ok:
			it.off = int64(it.n) * it.iv
		default:
			taken = append(taken, it)
		}
	}
	if len(taken) > 0 {
		err = cmp.Or(err, b.script(ctx, taken, nil))
	}
	if err != nil {
		b.failed(err)
		return err
	}
	b.down.Store(false)
	return nil
}

// script charges items with chargeScript, scriptKeys keys a call, in one pipeline that
// also carries the commands head adds, and records each key's answer in its item. Calls
// refused with NOSCRIPT (a Redis that restarted or never saw the script) are sent again
// once the script is loaded. It returns the first error of a call.
func (b *Batched) script(ctx context.Context, items []*flushItem, head func(redis.Pipeliner)) error {
	b.flushSyncs.Inc()
	calls := make([]*redis.Cmd, (len(items)+scriptKeys-1)/scriptKeys)
	part := func(c int) []*flushItem { return items[c*scriptKeys : min((c+1)*scriptKeys, len(items))] }
	send := func(only func(*redis.Cmd) bool) {
		_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			if head != nil {
				head(p)
				head = nil
			}
			for c := range calls {
				if !only(calls[c]) {
					continue
				}
				its := part(c)
				keys, args := make([]string, len(its)), make([]any, 0, 2*len(its))
				for j, it := range its {
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
		if err := chargeScript.Load(ctx, b.rdb).Err(); err == nil {
			send(noScript)
		}
	}
	var firstErr error
	for c, cmd := range calls {
		its := part(c)
		offs, err := parseOffsets(cmd, len(its))
		for j, it := range its {
			it.err = err
			if err == nil {
				it.off = offs[j]
			}
		}
		firstErr = cmp.Or(firstErr, err)
	}
	return firstErr
}

// redisTAT is t as chargeScript and redis_rate store a TAT: seconds since 2017-01-01.
func redisTAT(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMicro()-tatEpoch*1e6)/1e6, 'f', 6, 64)
}

// tatEpoch is 2017-01-01 in Unix seconds, the epoch of stored TATs.
const tatEpoch = 1483228800

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
local now = (t[1] - ` + strconv.Itoa(tatEpoch) + `) + (t[2] / 1000000)
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
