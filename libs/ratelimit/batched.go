package ratelimit

import (
	"context"
	"hash/maphash"
	"log/slog"
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
// per flush interval, in pipelines of at most 1,000 keys and 100 keys to a Lua call (a key
// it has never synced with one SET NX, which is cheaper: see exec), so that views stay
// fresh and a chunk is rarely spent between flushes. A key this process
// has not seen starts at a full burst, like a key Redis has not seen. A rejected request
// is not charged and costs no I/O; its RetryAfter comes from the local view.
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
//
// batched.go holds the limiter, its key table, its options and its start and stop;
// batched_local.go the decision in process (Allow) and the bookkeeping of a key's view
// around a sync; batched_redis.go the reconciliation with Redis: inline syncs, the
// flusher, keys beyond the table's bound, and Redis counting as down.
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

	// flushMu serializes flushes (the flusher's and Close's) and guards items and
	// redisAhead.
	flushMu sync.Mutex
	items   []flushItem
	// redisAhead is how far Redis's clock was ahead of this machine's at the last flush's
	// TIME, read at redisRead on the limiter's clock; exec claims fresh keys on it while
	// it is younger than maxClockAge.
	redisAhead time.Duration
	redisRead  int64

	stop      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
}

const (
	// numShards is the number of independently locked parts of the key table.
	numShards = 64
	// flushBatch is the most keys the flusher sends in one pipeline.
	flushBatch = 1000
	// maxClockAge is how long a reading of Redis's clock is used to claim keys: a clock
	// that drifts or is set meanwhile moves a claim's TAT only so far.
	maxClockAge = int64(time.Minute)
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
	// synced records that a sync of the key succeeded, so that Redis may hold its counter.
	synced bool
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
// flusher. Call Close to stop the flusher before closing rdb. rdb is one Redis (a
// client of a single server or of a failover set), not a Cluster: a flush charges keys
// of any hash slot in one script call.
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
