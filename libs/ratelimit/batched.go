package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

var _ Limiter = (*Batched)(nil)

// Batched is the distributed GCRA limiter for hot limits: it decides in process and
// reconciles with Redis in batches, so that a request costs a map lookup under a sharded
// mutex instead of a Redis round trip. Its counters are the Redis limiter's (same keys,
// same format), so replicas running either limiter on one prefix count together.
//
// Per limit and key it keeps a local view of the key's theoretical arrival time (TAT): the
// TAT Redis reported at the last sync, plus every request admitted here since. A request is
// decided against that view with the GCRA arithmetic of Memory. It is admitted without
// network I/O while the key's unconfirmed requests (admitted here but not yet reflected in
// a view from Redis) number fewer than its chunk, max(1, Rate/divisor), Rate/10 by default.
// The request that finds the chunk spent syncs the key inline first: one Lua call charges
// the pending requests to the shared TAT and returns it, and the request is decided
// against the fresh view. A background flusher syncs every key with pending requests once
// per flush interval, in pipelines of at most 1,000 keys, so that views stay fresh and a
// chunk is rarely spent between flushes. A key this process has not seen starts at
// a full burst, like a key Redis has not seen. A rejected request is not charged and costs
// no I/O; its RetryAfter comes from the local view.
//
// Overshoot. Redis is charged with every admitted request, even past the limit (the TAT
// moves into the future and later requests wait for the debt), so excess is paid back
// rather than forgiven. A process's view is stale only by the other processes' unconfirmed
// requests, which each keeps below its chunk. Hence, while Redis answers, with N processes
// sharing it, the requests admitted for one key in any window of length w number at most
// Rate + w/Interval (what one exact GCRA admits) + (N-1) x chunk: one process admits
// exactly the GCRA allowance, and three replicas on AllAPI (chunk 60) at most 120 requests
// beyond it. The flush interval does not enter the bound; it only makes overshoot rarer.
// The RTT of a sync delays a view, which only makes it stricter.
//
// Redis failures never stall a request: an inline sync (and a wait for another one) is
// cut off after the sync timeout, and after a failed round trip Redis counts as down until
// the flusher's next successful one. While down, each process limits on its own (up to N
// times the limit across N processes), keeps the requests it admits as pending, and the
// flusher retries every flush interval, with the flush timeout. When Redis answers again,
// a key that failed to sync is charged at most what its local view still holds, so that
// requests admitted during a long outage do not turn into a long debt afterwards.
//
// Memory is bounded twice: the flusher forgets keys whose view has fully recovered (a full
// burst, which is what an unknown key starts with), and the table holds at most maxKeys
// keys. A key that finds its shard full is decided by Redis directly (redis_rate, one round
// trip); while Redis is down, such a key is admitted and counted as an error.
//
// NewBatched starts the flusher; Close stops it and flushes what is pending.
type Batched struct {
	rdb      redis.UniversalClient
	overflow *redis_rate.Limiter
	prefix   string
	log      *slog.Logger
	now      func() time.Time
	epoch    time.Time
	seed     maphash.Seed
	reg      prometheus.Registerer

	flushEvery   time.Duration
	syncTimeout  time.Duration
	flushTimeout time.Duration
	chunkDivisor int
	maxKeys      int
	maxPerShard  int

	shards [numShards]shard

	// down is set by a failed round trip to Redis and cleared by a successful one.
	down    atomic.Bool
	lastLog atomic.Int64

	inlineSyncs, flushSyncs, overflowSyncs prometheus.Counter
	errors                                 prometheus.Counter

	// flushMu serializes flushes (the flusher's and Close's) and guards items.
	flushMu sync.Mutex
	items   []flushItem

	stop      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
}

const (
	// numShards is the number of independently locked parts of the key table.
	numShards = 64
	// flushBatch is the most keys the flusher sends in one pipeline.
	flushBatch = 1000
)

// shard is one locked part of the key table, padded to a cache line so that neighbouring
// shards' locks do not contend through false sharing.
type shard struct {
	mu sync.Mutex
	m  map[bkey]*entry
	_  [48]byte
}

// bkey names a counter: a limit and a key. A struct of the two strings, rather than their
// concatenation, lets Allow look a key up without allocating.
type bkey struct{ name, key string }

// entry is the local state of one counter. Every field is guarded by its shard's mutex.
type entry struct {
	// tat is the local view of the TAT, in nanoseconds since the limiter's epoch.
	tat int64
	// iv is the emission interval of the key's limit, in nanoseconds.
	iv int64
	// pending counts the requests admitted here and not yet sent to Redis.
	pending int
	// inflight counts the requests carried by the sync in flight; it is non-zero only
	// while wait is set.
	inflight int
	// wait is set while a sync of the key is in flight and closed when it has settled.
	wait chan struct{}
	// outage records that the key's last sync failed, so that pending may span an outage.
	outage bool
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

// BatchedOption configures NewBatched.
type BatchedOption func(*Batched)

// WithFlushInterval sets how often the flusher syncs keys with pending requests (100ms by
// default). It bounds how stale the views are, not the overshoot.
func WithFlushInterval(d time.Duration) BatchedOption {
	return func(b *Batched) { b.flushEvery = d }
}

// WithChunkDivisor sets a limit's chunk to max(1, Rate/n) (n is 10 by default): the
// requests a process may admit on one view of a key. A larger chunk means fewer inline
// syncs and a larger overshoot bound.
func WithChunkDivisor(n int) BatchedOption {
	return func(b *Batched) { b.chunkDivisor = max(1, n) }
}

// WithSyncTimeout bounds an inline sync, and a request's wait for a sync in flight (50ms by
// default): the most Redis can add to a request's latency.
func WithSyncTimeout(d time.Duration) BatchedOption {
	return func(b *Batched) { b.syncTimeout = d }
}

// WithFlushTimeout bounds each pipeline of the flusher (500ms by default).
func WithFlushTimeout(d time.Duration) BatchedOption {
	return func(b *Batched) { b.flushTimeout = d }
}

// WithMaxKeys bounds the key table (262,144 keys by default: about 40 MB at some 150
// bytes a key).
func WithMaxKeys(n int) BatchedOption {
	return func(b *Batched) { b.maxKeys = max(numShards, n) }
}

// WithClock makes the limiter read time from now (tests only; time.Now by default). Redis
// keeps its own clock.
func WithClock(now func() time.Time) BatchedOption {
	return func(b *Batched) { b.now = now }
}

// WithRegisterer registers the limiter's metrics on reg (none are registered by default).
func WithRegisterer(reg prometheus.Registerer) BatchedOption {
	return func(b *Batched) { b.reg = reg }
}

// WithLogger sets where the limiter reports that Redis became unreachable (nowhere by
// default); it logs at most once a minute.
func WithLogger(log *slog.Logger) BatchedOption {
	return func(b *Batched) { b.log = log }
}

// NewBatched returns a limiter whose Redis keys all start with prefix, and starts its
// flusher. Call Close to stop the flusher before closing rdb.
func NewBatched(rdb redis.UniversalClient, prefix string, opts ...BatchedOption) *Batched {
	b := &Batched{
		rdb:          rdb,
		overflow:     redis_rate.NewLimiter(rdb),
		prefix:       prefix,
		log:          slog.New(slog.DiscardHandler),
		now:          time.Now,
		seed:         maphash.MakeSeed(),
		flushEvery:   100 * time.Millisecond,
		syncTimeout:  50 * time.Millisecond,
		flushTimeout: 500 * time.Millisecond,
		chunkDivisor: 10,
		maxKeys:      1 << 18,
		stop:         make(chan struct{}),
		stopped:      make(chan struct{}),
	}
	for _, o := range opts {
		o(b)
	}
	b.epoch = b.now()
	b.maxPerShard = b.maxKeys / numShards
	for i := range b.shards {
		b.shards[i].m = make(map[bkey]*entry)
	}

	syncs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sharenote_ratelimit_syncs_total",
		Help: "Round trips of the batched rate limiter to Redis: inline (a key spent its chunk), flush (one pipeline of the flusher), overflow (a key beyond the table's bound).",
	}, []string{"mode"})
	b.inlineSyncs = syncs.WithLabelValues("inline")
	b.flushSyncs = syncs.WithLabelValues("flush")
	b.overflowSyncs = syncs.WithLabelValues("overflow")
	b.errors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sharenote_ratelimit_sync_errors_total",
		Help: "Round trips of the batched rate limiter to Redis that failed (limits then hold per process), and checks of keys beyond the table's bound skipped while Redis was unavailable (those requests were allowed).",
	})
	if b.reg != nil {
		b.reg.MustRegister(syncs, b.errors, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharenote_ratelimit_keys",
			Help: "Keys held by the batched rate limiter.",
		}, func() float64 { return float64(b.size()) }))
	}

	go b.run()
	return b
}

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

// Close stops the flusher, waits for it, and sends what is pending to Redis.
func (b *Batched) Close(ctx context.Context) error {
	b.closeOnce.Do(func() { close(b.stop) })
	select {
	case <-b.stopped:
	case <-ctx.Done():
		return ctx.Err()
	}
	return b.flush(ctx)
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

// size is the number of keys the table holds.
func (b *Batched) size() int {
	n := 0
	for i := range b.shards {
		sh := &b.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
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
