package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/ratelimit"
	"github.com/sharenote/sharenote/libs/redisx"
	"github.com/sharenote/sharenote/libs/testkit"
)

// newBatched starts a batched limiter and stops it when the test ends, before rdb closes.
func newBatched(t *testing.T, rdb *redis.Client, prefix string, opts ...ratelimit.BatchedOption) *ratelimit.Batched {
	t.Helper()
	lim := ratelimit.NewBatched(rdb, prefix, opts...)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// The final flush fails where a test took Redis away; the flusher has stopped
		// whenever Close returns something other than ctx's error.
		if err := lim.Close(ctx); errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			t.Error("Close did not stop the flusher within 5s")
		}
	})
	return lim
}

// jan2017 is redis_rate's epoch: TATs are stored in seconds since then.
const jan2017 = 1483228800

// spreadKey names the i-th key of admitSpread.
func spreadKey(i int) string { return fmt.Sprintf("10.0.%d.%d", i>>8, i&255) }

// admitSpread admits i%5+1 requests on each of n keys, fewer than a chunk of l (60 a
// minute).
func admitSpread(t *testing.T, lim *ratelimit.Batched, l ratelimit.Limit, n int) {
	t.Helper()
	for i := range n {
		for range i%5 + 1 {
			if res := allow(t, lim, spreadKey(i), l); !res.Allowed {
				t.Fatalf("key %d: %+v, want allowed", i, res)
			}
		}
	}
}

// requireSpreadTATs checks that Redis holds admitSpread's requests, each key's own: i%5+1
// intervals ahead of Redis's now (and an hour more for the key spent elsewhere), less at
// most the time since start, more at most late.
func requireSpreadTATs(t *testing.T, rdb *redis.Client, prefix string, l ratelimit.Limit, n, elsewhere int, start time.Time, late time.Duration) {
	t.Helper()
	for i := range n {
		want := time.Duration(i%5+1) * l.Interval()
		if i == elsewhere {
			want += time.Hour
		}
		if off := tatOffset(t, rdb, prefix, l.Name, spreadKey(i)); off > want+late+5*time.Millisecond || off < want-time.Since(start)-5*time.Millisecond {
			t.Fatalf("key %d: the shared TAT is %s ahead, want %s (late by at most %s)", i, off, want, late)
		}
	}
}

// newCounted starts a batched limiter on a Redis client whose charges are counted.
func newCounted(t *testing.T, opts ...ratelimit.BatchedOption) (*redis.Client, *commands, string, *ratelimit.Batched) {
	t.Helper()
	rdb := openRedis(t, testkit.RedisURL(t))
	cmds := &commands{}
	rdb.AddHook(cmds)
	prefix := testkit.NewRedisPrefix(t)
	return rdb, cmds, prefix, newBatched(t, rdb, prefix, opts...)
}

// requireOnlySpentRefused checks that of the keys around admitSpread's key spent
// elsewhere, only that one is refused.
func requireOnlySpentRefused(t *testing.T, lim *ratelimit.Batched, l ratelimit.Limit, spent int) {
	t.Helper()
	for i := spent - 1; i <= spent+1; i++ {
		if res := allow(t, lim, spreadKey(i), l); res.Allowed != (i != spent) {
			t.Fatalf("key %d after the flush: %+v, want allowed only if it is not the key spent elsewhere (%d)", i, res, spent)
		}
	}
}

// spendElsewhere sets a counter's TAT an hour past Redis's now, as another replica that
// spent the limit would, through a client of its own.
func spendElsewhere(t *testing.T, redisKey string) {
	t.Helper()
	ctx := context.Background()
	rdb := openRedis(t, testkit.RedisURL(t))
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, redisKey, float64(now.UnixMicro())/1e6-jan2017+3600, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
}

// tatOffset reads the TAT Redis holds for a counter, as an offset from Redis's now.
func tatOffset(t *testing.T, rdb *redis.Client, prefix, name, key string) time.Duration {
	t.Helper()
	ctx := context.Background()
	tat, err := rdb.Get(ctx, "rate:"+prefix+name+":"+key).Float64()
	if err != nil {
		t.Fatalf("read the shared TAT: %v", err)
	}
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration((tat - (float64(now.UnixMicro())/1e6 - jan2017)) * float64(time.Second))
}

// commands records the scripts a client runs in Redis, alone or in pipelines. EVALSHA
// refused with NOSCRIPT is left out: it only means the script was not cached yet, and
// the limiter sends it again.
type commands struct {
	mu        sync.Mutex
	names     []string
	pipelines int
	// down makes every command fail as if Redis were unreachable.
	down atomic.Bool
}

func (c *commands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if c.down.Load() {
			cmd.SetErr(errors.New("dial tcp: connection refused"))
			return cmd.Err()
		}
		err := next(ctx, cmd)
		c.record(cmd)
		return err
	}
}

func (c *commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if c.down.Load() {
			err := errors.New("dial tcp: connection refused")
			for _, cmd := range cmds {
				cmd.SetErr(err)
			}
			return err
		}
		err := next(ctx, cmds)
		before, _ := c.counts()
		for _, cmd := range cmds {
			c.record(cmd)
		}
		if after, _ := c.counts(); after > before {
			c.mu.Lock()
			c.pipelines++
			c.mu.Unlock()
		}
		return err
	}
}

// record notes cmd if it charges a key, with a script or SET: the commands a connection
// sends when it opens (HELLO, CLIENT SETINFO) and the TIME a flush reads are no charge.
func (c *commands) record(cmd redis.Cmder) {
	if name := cmd.Name(); name != "evalsha" && name != "eval" && name != "set" || redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = append(c.names, cmd.Name())
}

// count returns how many commands named name were sent.
func (c *commands) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, got := range c.names {
		if got == name {
			n++
		}
	}
	return n
}

// counts returns how many commands and pipelines were sent.
func (c *commands) counts() (cmds, pipelines int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.names), c.pipelines
}

func TestBatchedAdmitsTheBurstThenAnswers429WithRetryAfter(t *testing.T) {
	lim := newBatched(t, openRedis(t, testkit.RedisURL(t)), testkit.NewRedisPrefix(t))
	l := ratelimit.AllAPI
	gin.SetMode(gin.TestMode)
	r := gin.New()
	r.Use(errs.Middleware(slog.New(slog.DiscardHandler), nil))
	r.GET("/", ratelimit.Middleware(lim, l, func(*gin.Context) string { return "ip" }),
		func(c *gin.Context) { c.Status(http.StatusNoContent) })

	start := time.Now()
	admitted := 0
	var rejected *httptest.ResponseRecorder
	for range 2 * l.Rate {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		if w.Code != http.StatusNoContent {
			rejected = w
			break
		}
		admitted++
	}
	// Redis earns one request back per interval while the burst runs.
	refill := int(time.Since(start) / l.Interval())
	if admitted < l.Rate || admitted > l.Rate+refill {
		t.Fatalf("a quick burst admitted %d requests, want %d (+%d earned in %s)", admitted, l.Rate, refill, time.Since(start))
	}
	if rejected == nil || rejected.Code != http.StatusTooManyRequests {
		t.Fatalf("no 429 after %d requests", admitted)
	}
	if s, err := strconv.Atoi(rejected.Header().Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("Retry-After %q, want whole seconds, at least 1", rejected.Header().Get("Retry-After"))
	}
}

func TestBatchedRejectsWithTheRetryAfterOfTheLocalView(t *testing.T) {
	lim := newBatched(t, openRedis(t, testkit.RedisURL(t)), testkit.NewRedisPrefix(t))
	fast := ratelimit.Limit{Name: "fast", Rate: 10, Period: time.Second} // Interval 100ms.
	spendBurst(t, lim, "ip", fast)
	res := allow(t, lim, "ip", fast)
	if res.Allowed || res.RetryAfter <= 0 || res.RetryAfter > fast.Interval() {
		t.Fatalf("after the burst: %+v, want rejected for at most %s", res, fast.Interval())
	}
	time.Sleep(res.RetryAfter)
	if res := allow(t, lim, "ip", fast); !res.Allowed {
		t.Fatalf("after RetryAfter: %+v, want allowed", res)
	}
}

func TestBatchedReplicasOvershootByAtMostOneChunkEachOfTheOthers(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d replicas", n), func(t *testing.T) {
			url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
			replicas := make([]*ratelimit.Batched, n)
			for i := range replicas {
				replicas[i] = newBatched(t, openRedis(t, url), prefix)
			}
			l := ratelimit.AllAPI
			chunk := l.Rate / 10

			var admitted atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			for _, lim := range replicas {
				for range 4 {
					wg.Go(func() {
						for range 1000 {
							res, err := lim.Allow(context.Background(), "ip", l)
							if err != nil {
								t.Error(err)
								return
							}
							if res.Allowed {
								admitted.Add(1)
							}
						}
					})
				}
			}
			wg.Wait()
			elapsed := time.Since(start)
			got, refill := int(admitted.Load()), int(elapsed/l.Interval())+1
			if hi := l.Rate + (n-1)*chunk + refill; got < l.Rate || got > hi {
				t.Fatalf("%d replicas admitted %d requests in %s, want %d to %d (burst + (N-1) x chunk + %d earned)",
					n, got, elapsed, l.Rate, hi, refill)
			}
			t.Logf("%d replicas admitted %d of a burst of %d in %s", n, got, l.Rate, elapsed)

			// The excess is charged, not forgiven: the shared counter owes it, and a
			// Redis limiter on the same prefix reads the same counter.
			for _, lim := range replicas {
				if err := lim.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			// Redis decided before the answer came back: what is owed is counted down to
			// then, however long a busy machine took to send the question.
			res := allow(t, ratelimit.NewRedis(openRedis(t, url), prefix), "ip", l)
			owed := time.Duration(got-l.Rate+1)*l.Interval() - time.Since(start)
			if owed > 5*time.Millisecond && (res.Allowed || res.RetryAfter < owed-5*time.Millisecond) {
				t.Fatalf("after %d admitted, the Redis limiter answers %+v, want rejected for at least %s", got, res, owed)
			}
		})
	}
}

func TestBatchedSyncsOncePerChunkAndFlushesTheRest(t *testing.T) {
	rdb, cmds, prefix, lim := newCounted(t, ratelimit.WithFlushInterval(time.Hour), ratelimit.WithChunkDivisor(100))
	big := ratelimit.Limit{Name: "big", Rate: 6000, Period: time.Minute} // Chunk 60, interval 10ms.
	const calls, chunk = 1000, 60

	start := time.Now()
	for i := range calls {
		if res := allow(t, lim, "ip", big); !res.Allowed {
			t.Fatalf("call %d rejected: %+v", i+1, res)
		}
	}
	// The first chunk is admitted on the full burst of an unknown key; each later one
	// begins with one inline sync that charges the chunk before it.
	want := (calls+chunk-1)/chunk - 1
	if n, p := cmds.counts(); n != want || p != 0 {
		t.Fatalf("%d Allow calls sent %d commands in %d pipelines, want %d single commands (one per chunk after the first): %v",
			calls, n, p, want, cmds.names)
	}

	if err := lim.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, p := cmds.counts(); n != want+1 || p != 1 {
		t.Fatalf("after one flush: %d commands in %d pipelines, want one more command in one pipeline", n, p)
	}
	// Every admitted request is charged exactly once: 1000 intervals of 10ms.
	full := time.Duration(calls) * big.Interval()
	if off := tatOffset(t, rdb, prefix, big.Name, "ip"); off > full+5*time.Millisecond || off < full-time.Since(start)-5*time.Millisecond {
		t.Fatalf("the shared TAT is %s ahead, want %s less at most the %s the test took", off, full, time.Since(start))
	}
	if err := lim.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, p := cmds.counts(); n != want+1 || p != 1 {
		t.Fatalf("a flush with nothing pending sent commands: %d in %d pipelines", n, p)
	}
}

func TestBatchedLimitsLocallyWithoutStallingWhileRedisIsDown(t *testing.T) {
	rdb, err := redisx.Open("redis://127.0.0.1:1/0") // Nothing listens on port 1.
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	reg, logs, clock := prometheus.NewRegistry(), &testkit.SyncBuffer{}, testkit.NewClock()
	const syncTimeout = 20 * time.Millisecond
	lim := newBatched(t, rdb, "sntest:", ratelimit.WithClock(clock.Now), ratelimit.WithSyncTimeout(syncTimeout),
		ratelimit.WithRegisterer(reg), ratelimit.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	l := ratelimit.AllAPI

	admitted, slow, slowest := 0, 0, time.Duration(0)
	for range 3 * l.Rate {
		start := time.Now()
		res, err := lim.Allow(context.Background(), "ip", l)
		took := time.Since(start)
		slowest = max(slowest, took)
		if took > 5*time.Millisecond {
			slow++
		}
		if err != nil {
			t.Fatalf("Allow with Redis down: %v", err)
		}
		if res.Allowed {
			admitted++
		}
	}
	if admitted != l.Rate {
		t.Fatalf("with Redis down %d of %d requests were admitted, want the burst of %d", admitted, 3*l.Rate, l.Rate)
	}
	// Only the request that found Redis down waits, for at most the sync timeout; the
	// others decide locally at once.
	if slowest > syncTimeout+30*time.Millisecond || slow > 2 {
		t.Fatalf("with Redis down %d calls took over 5ms, the slowest %s; want one at most, within the sync timeout (%s)",
			slow, slowest, syncTimeout)
	}
	if got := testkit.Metric(t, reg, "sharenote_ratelimit_sync_errors_total"); got < 1 {
		t.Fatalf("sharenote_ratelimit_sync_errors_total = %v, want the failed syncs counted", got)
	}
	if n := len(logLines(logs)); n != 1 {
		t.Fatalf("logged %d lines, want one for the outage:\n%s", n, logs.String())
	}
	t.Logf("with Redis down %d of %d calls took over 5ms, the slowest %s", slow, 3*l.Rate, slowest)

	clock.Advance(l.Interval())
	if res := allow(t, lim, "ip", l); !res.Allowed {
		t.Fatalf("one interval later: %+v, want the request earned locally", res)
	}
	if res := allow(t, lim, "ip", l); res.Allowed {
		t.Fatal("the local view admits more than it earned")
	}
}

func TestBatchedChargesWhatTheLocalViewHeldWhenRedisReturns(t *testing.T) {
	rdb := openRedis(t, testkit.RedisURL(t))
	cmds := &commands{}
	rdb.AddHook(cmds)
	prefix, clock := testkit.NewRedisPrefix(t), testkit.NewClock()
	lim := newBatched(t, rdb, prefix, ratelimit.WithClock(clock.Now), ratelimit.WithFlushInterval(time.Hour))
	l := ratelimit.AllAPI
	ctx := context.Background()

	cmds.down.Store(true)
	spendBurst(t, lim, "a", l)
	spendBurst(t, lim, "b", l)
	if err := lim.Flush(ctx); err == nil {
		t.Fatal("a flush with Redis down succeeded")
	}
	// Half a period later both keys have earned half their burst back locally; "b"
	// spends it.
	clock.Advance(l.Period / 2)
	for range l.Rate / 2 {
		if res := allow(t, lim, "b", l); !res.Allowed {
			t.Fatalf("b after half a period: %+v, want the earned half of the burst", res)
		}
	}

	cmds.down.Store(false)
	start := time.Now()
	if err := lim.Flush(ctx); err != nil {
		t.Fatalf("the first flush after the outage: %v", err)
	}
	// Each key is charged what its local view still holds, not every request admitted
	// during the outage: what was earned back meanwhile is not owed again.
	for _, c := range []struct {
		key             string
		admitted, owing int
	}{
		{"a", l.Rate, l.Rate / 2},
		{"b", l.Rate + l.Rate/2, l.Rate},
	} {
		want := time.Duration(c.owing) * l.Interval()
		if off := tatOffset(t, rdb, prefix, l.Name, c.key); off > want+5*time.Millisecond || off < want-time.Since(start)-5*time.Millisecond {
			t.Errorf("%q admitted %d during the outage; the shared TAT is %s ahead, want %s (%d requests)", c.key, c.admitted, off, want, c.owing)
		}
	}

	// Redis is up again: the next spent chunk syncs inline.
	before, _ := cmds.counts()
	for range l.Rate/10 + 1 {
		allow(t, lim, "c", l)
	}
	if after, _ := cmds.counts(); after != before+1 {
		t.Fatalf("after the outage a spent chunk sent %d commands, want one inline sync", after-before)
	}
}

func TestBatchedForgetsRecoveredKeys(t *testing.T) {
	clock := testkit.NewClock()
	rdb := openRedis(t, testkit.RedisURL(t))
	lim := newBatched(t, rdb, testkit.NewRedisPrefix(t), ratelimit.WithClock(clock.Now), ratelimit.WithFlushInterval(time.Hour))
	l := ratelimit.AllAPI
	const keys = 100_000

	for i := range keys {
		if res := allow(t, lim, fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255), l); !res.Allowed {
			t.Fatalf("key %d: %+v, want allowed", i, res)
		}
	}
	if got := lim.Keys(); got != keys {
		t.Fatalf("the limiter holds %d keys, want %d", got, keys)
	}
	if err := lim.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := lim.Keys(); got != keys {
		t.Fatalf("a flush forgot keys that have not recovered: %d left of %d", got, keys)
	}
	flushed := time.Now()
	// Each view held one request: one interval to recover, and a little more for the
	// rounding of Redis's floating-point times.
	clock.Advance(2 * l.Interval())
	if err := lim.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := lim.Keys(); got != 0 {
		t.Fatalf("after every key recovered the limiter still holds %d keys, want 0", got)
	}
	// The keys expire in Redis a second after the flush; waiting for that spares the
	// cleanup 100,000 deletes.
	time.Sleep(time.Until(flushed.Add(1100 * time.Millisecond)))
}

func TestBatchedFlushChargesEachKeyItsOwnAndReadsItsOwnView(t *testing.T) {
	rdb, cmds, prefix, lim := newCounted(t, ratelimit.WithFlushInterval(time.Hour))
	l := ratelimit.Limit{Name: "m", Rate: 60, Period: time.Minute} // Chunk 6, interval 1s.
	ctx := context.Background()
	// 250 keys take three script calls.
	const keys, blocked = 250, 107
	start := time.Now()
	admitSpread(t, lim, l, keys)
	// Another replica has spent one key's limit for an hour, which only the flush tells.
	spendElsewhere(t, "rate:"+prefix+l.Name+":"+spreadKey(blocked))
	// A Redis that lost its scripts answers NOSCRIPT; the calls are sent again.
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	if err := lim.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, p := cmds.counts(); n != 3 || p != 1 {
		t.Fatalf("a flush of %d keys ran %d scripts in %d pipelines, want 3 in 1", keys, n, p)
	}
	requireSpreadTATs(t, rdb, prefix, l, keys, blocked, start, 0)
	requireOnlySpentRefused(t, lim, l, blocked)
}

func TestBatchedClaimsFreshKeysWithSetNXOnRedisClock(t *testing.T) {
	rdb, cmds, prefix, lim := newCounted(t, ratelimit.WithFlushInterval(time.Hour))
	l := ratelimit.Limit{Name: "m", Rate: 60, Period: time.Minute} // Chunk 6, interval 1s.
	ctx := context.Background()
	// The first flush reads Redis's clock; its key goes to the script.
	allow(t, lim, "first", l)
	asked := time.Now()
	if err := lim.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Redis's clock is read late by at most that flush's round trip, and a claimed TAT
	// only later for it.
	late := time.Since(asked)
	if n, s := cmds.count("evalsha"), cmds.count("set"); n != 1 || s != 0 {
		t.Fatalf("the first flush ran %d scripts and %d SETs, want 1 and 0", n, s)
	}

	const keys, taken = 250, 107
	start := time.Now()
	admitSpread(t, lim, l, keys)
	// Another replica has spent one key's limit for an hour: its claim finds the counter
	// taken, and the script charges it.
	spendElsewhere(t, "rate:"+prefix+l.Name+":"+spreadKey(taken))
	_, before := cmds.counts()
	if err := lim.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, s := cmds.count("evalsha"), cmds.count("set"); n != 2 || s != keys {
		t.Fatalf("a flush of %d fresh keys ran %d SETs and %d scripts in all, want %d SETs and one more script (the taken key)", keys, s, n, keys)
	}
	if _, p := cmds.counts(); p != before+2 {
		t.Fatalf("the flush took %d pipelines, want 2 (the claims, then the taken key's script)", p-before)
	}
	requireSpreadTATs(t, rdb, prefix, l, keys, taken, start, late)
	for i := range keys {
		if ttl := rdb.TTL(ctx, "rate:"+prefix+l.Name+":"+spreadKey(i)).Val(); i != taken && ttl != time.Duration(i%5+1)*time.Second {
			t.Fatalf("key %d expires in %s, want %s: when its TAT has passed", i, ttl, time.Duration(i%5+1)*time.Second)
		}
	}
	requireOnlySpentRefused(t, lim, l, taken)
	// A key synced once goes to the script, as Redis holds its counter.
	if err := lim.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, s := cmds.count("evalsha"), cmds.count("set"); n != 3 || s != keys {
		t.Fatalf("a flush of synced keys ran %d scripts and %d SETs in all, want one more script and no SET", n, s)
	}
}

func TestBatchedClaimsOnlyOnAFreshReadingOfRedisClock(t *testing.T) {
	clock := testkit.NewClock()
	_, cmds, _, lim := newCounted(t, ratelimit.WithClock(clock.Now), ratelimit.WithFlushInterval(time.Hour))
	ctx := context.Background()
	flush := func(key string) (scripts, sets int) {
		t.Helper()
		allow(t, lim, key, perMinute)
		n, s := cmds.count("evalsha"), cmds.count("set")
		if err := lim.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return cmds.count("evalsha") - n, cmds.count("set") - s
	}
	if n, s := flush("a"); n != 1 || s != 0 {
		t.Fatalf("the first flush: %d scripts and %d SETs, want the script alone", n, s)
	}
	clock.Advance(59 * time.Second)
	if n, s := flush("b"); n != 0 || s != 1 {
		t.Fatalf("59s later: %d scripts and %d SETs, want a claim", n, s)
	}
	// That flush read the clock again; a minute after it the reading is too old to use.
	clock.Advance(time.Minute)
	if n, s := flush("c"); n != 1 || s != 0 {
		t.Fatalf("a quiet minute later: %d scripts and %d SETs, want the script alone", n, s)
	}
	if n, s := flush("d"); n != 0 || s != 1 {
		t.Fatalf("right after: %d scripts and %d SETs, want a claim", n, s)
	}
}

func TestBatchedDecidesKeysBeyondItsBoundInRedis(t *testing.T) {
	url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
	const maxKeys = 256 // Four per shard.
	lim := newBatched(t, openRedis(t, url), prefix, ratelimit.WithMaxKeys(maxKeys))
	for i := range 2000 {
		allow(t, lim, fmt.Sprintf("10.0.%d.%d", i>>8, i&255), ratelimit.AllAPI)
	}
	if got := lim.Keys(); got > maxKeys {
		t.Fatalf("the limiter holds %d keys, want at most %d", got, maxKeys)
	}
	// Every shard is full, so this key is decided by Redis alone, and still limited.
	start := time.Now()
	spendBurst(t, lim, "overflow", perMinute)
	requireRejected(t, lim, "overflow", perMinute, start)
	if got := lim.Keys(); got > maxKeys {
		t.Fatalf("the limiter holds %d keys, want at most %d", got, maxKeys)
	}
}

func TestBatchedCloseFlushesWhatIsPending(t *testing.T) {
	rdb := openRedis(t, testkit.RedisURL(t))
	prefix := testkit.NewRedisPrefix(t)
	lim := newBatched(t, rdb, prefix, ratelimit.WithFlushInterval(time.Hour))
	start := time.Now()
	for range 5 {
		allow(t, lim, "ip", perMinute)
	}
	if err := lim.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := 5 * perMinute.Interval()
	if off := tatOffset(t, rdb, prefix, perMinute.Name, "ip"); off > want+5*time.Millisecond || off < want-time.Since(start)-5*time.Millisecond {
		t.Fatalf("after Close the shared TAT is %s ahead, want %s: the 5 requests admitted", off, want)
	}
	if err := lim.Close(context.Background()); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// benchRedis connects to the test Redis (testkit's helpers take a *testing.T) under a
// prefix of the benchmark's own, deleted afterwards.
func benchRedis(b *testing.B) (*redis.Client, string) {
	b.Helper()
	url := os.Getenv("SHARE_TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	rdb, err := redisx.Open(url)
	if err != nil {
		b.Fatal(err)
	}
	if err := redisx.Ping(context.Background(), rdb); err != nil {
		b.Skipf("no test Redis: %v", err)
	}
	prefix := fmt.Sprintf("sntest:bench%d:", time.Now().UnixNano())
	b.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		_ = rdb.Close()
	})
	return rdb, prefix
}

// benchmarkAllow checks AllAPI in parallel for clients spread over 4,096 addresses.
func benchmarkAllow(b *testing.B, lim ratelimit.Limiter) {
	ips := make([]string, 4096)
	for i := range ips {
		ips[i] = fmt.Sprintf("10.0.%d.%d", i>>8, i&255)
	}
	var worker atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := worker.Add(1) * 997
		for pb.Next() {
			i++
			if _, err := lim.Allow(context.Background(), ips[i%uint64(len(ips))], ratelimit.AllAPI); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkRedisAllow(b *testing.B) {
	rdb, prefix := benchRedis(b)
	benchmarkAllow(b, ratelimit.NewRedis(rdb, prefix))
}

func BenchmarkBatchedAllow(b *testing.B) {
	rdb, prefix := benchRedis(b)
	lim := ratelimit.NewBatched(rdb, prefix)
	b.Cleanup(func() { _ = lim.Close(context.Background()) })
	benchmarkAllow(b, lim)
}
