package ratelimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
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

func TestMain(m *testing.M) { testkit.Main(m) }

// perMinute is 10 a minute: an interval of 6s, far longer than any test runs, so that
// Redis (which reads its own clock) earns nothing back while a test is running.
var perMinute = ratelimit.Limit{Name: "t", Rate: 10, Period: time.Minute}

// backend makes a fresh limiter with empty counters.
type backend struct {
	name string
	new  func(t *testing.T) ratelimit.Limiter
}

// backends are the two implementations that must admit the same requests.
var backends = []backend{
	{"memory", func(t *testing.T) ratelimit.Limiter {
		// The clock never moves unless a test advances it.
		return ratelimit.NewMemory(testkit.NewClock().Now)
	}},
	{"redis", func(t *testing.T) ratelimit.Limiter {
		return ratelimit.NewRedis(openRedis(t, testkit.RedisURL(t)), testkit.NewRedisPrefix(t))
	}},
}

func openRedis(t *testing.T, url string) *redis.Client {
	t.Helper()
	rdb, err := redisx.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// allow calls lim and fails the test on an error.
func allow(t *testing.T, lim ratelimit.Limiter, key string, l ratelimit.Limit) ratelimit.Result {
	t.Helper()
	res, err := lim.Allow(context.Background(), key, l)
	if err != nil {
		t.Fatalf("Allow(%q, %s): %v", key, l.Name, err)
	}
	return res
}

// spendBurst makes l.Rate requests and requires every one to be allowed.
func spendBurst(t *testing.T, lim ratelimit.Limiter, key string, l ratelimit.Limit) {
	t.Helper()
	for i := range l.Rate {
		if res := allow(t, lim, key, l); !res.Allowed {
			t.Fatalf("request %d of a burst of %d on %q was rejected (retry after %s)", i+1, l.Rate, key, res.RetryAfter)
		}
	}
}

// requireRejected requires the next request to be rejected with a RetryAfter of one
// interval, less at most the real time that passed since the burst began (Redis counts
// with its own clock).
func requireRejected(t *testing.T, lim ratelimit.Limiter, key string, l ratelimit.Limit, burstStart time.Time) {
	t.Helper()
	res := allow(t, lim, key, l)
	if res.Allowed {
		t.Fatalf("request %d on %q was allowed, want rejected after a burst of %d", l.Rate+1, key, l.Rate)
	}
	// 5ms covers the rounding of Redis's floating-point times.
	lo, hi := l.Interval()-time.Since(burstStart)-5*time.Millisecond, l.Interval()+5*time.Millisecond
	if res.RetryAfter < lo || res.RetryAfter > hi {
		t.Fatalf("RetryAfter = %s, want about one interval (%s)", res.RetryAfter, l.Interval())
	}
}

func TestLimiterBackends(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, lim ratelimit.Limiter)
	}{
		{"a burst of Rate is allowed and the next request waits one interval", func(t *testing.T, lim ratelimit.Limiter) {
			start := time.Now()
			spendBurst(t, lim, "ip", perMinute)
			requireRejected(t, lim, "ip", perMinute, start)
		}},
		{"rejected requests do not push the retry time further out", func(t *testing.T, lim ratelimit.Limiter) {
			start := time.Now()
			spendBurst(t, lim, "ip", perMinute)
			for range 5 {
				requireRejected(t, lim, "ip", perMinute, start)
			}
		}},
		{"each key has its own counter", func(t *testing.T, lim ratelimit.Limiter) {
			start := time.Now()
			spendBurst(t, lim, "a", perMinute)
			requireRejected(t, lim, "a", perMinute, start)
			spendBurst(t, lim, "b", perMinute)
			requireRejected(t, lim, "b", perMinute, start)
		}},
		{"limits with different names count the same key separately", func(t *testing.T, lim ratelimit.Limiter) {
			other := perMinute
			other.Name = "u"
			start := time.Now()
			spendBurst(t, lim, "k", perMinute)
			requireRejected(t, lim, "k", perMinute, start)
			spendBurst(t, lim, "k", other)
			requireRejected(t, lim, "k", other, start)
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, b.new(t)) })
			}
		})
	}
}

func TestMemoryRetryAfterIsTheEmissionInterval(t *testing.T) {
	for _, l := range []ratelimit.Limit{ratelimit.AllAPI, ratelimit.Auth, ratelimit.Mutation, {Name: "odd", Rate: 7, Period: time.Second}} {
		t.Run(fmt.Sprintf("%s %d per %s", l.Name, l.Rate, l.Period), func(t *testing.T) {
			lim := ratelimit.NewMemory(testkit.NewClock().Now)
			spendBurst(t, lim, "k", l)
			res := allow(t, lim, "k", l)
			if res.Allowed || res.RetryAfter != l.Period/time.Duration(l.Rate) {
				t.Fatalf("after the burst: %+v, want rejected with RetryAfter %s", res, l.Period/time.Duration(l.Rate))
			}
		})
	}
}

func TestMemoryEarnsOneRequestPerInterval(t *testing.T) {
	clock := testkit.NewClock()
	lim := ratelimit.NewMemory(clock.Now)
	l, iv := perMinute, perMinute.Interval()
	spendBurst(t, lim, "k", l)

	for round := range 3 {
		clock.Advance(iv)
		if res := allow(t, lim, "k", l); !res.Allowed {
			t.Fatalf("round %d: the request earned by one interval was rejected: %+v", round, res)
		}
		if res := allow(t, lim, "k", l); res.Allowed || res.RetryAfter != iv {
			t.Fatalf("round %d: a second request in the same interval = %+v, want rejected for %s", round, res, iv)
		}
	}

	clock.Advance(iv / 3)
	if res := allow(t, lim, "k", l); res.Allowed || res.RetryAfter != iv-iv/3 {
		t.Fatalf("a third into the interval: %+v, want rejected for %s", res, iv-iv/3)
	}
	clock.Advance(iv - iv/3)
	if res := allow(t, lim, "k", l); !res.Allowed {
		t.Fatalf("at the end of the interval: %+v, want allowed", res)
	}

	clock.Advance(l.Period)
	spendBurst(t, lim, "k", l) // A full period idle restores the whole burst...
	if res := allow(t, lim, "k", l); res.Allowed {
		t.Fatal("...but not more than the burst")
	}
}

func TestMemorySweepForgetsOnlyRecoveredKeys(t *testing.T) {
	const sweepEvery = 4096
	clock := testkit.NewClock()
	lim := ratelimit.NewMemory(clock.Now)
	l := ratelimit.Limit{Name: "t", Rate: 2, Period: 2 * time.Second} // interval 1s

	// "hot" spends its burst: its TAT is two intervals ahead and it must survive the sweep.
	spendBurst(t, lim, "hot", l)
	calls := l.Rate
	for ; calls < sweepEvery-1; calls++ {
		allow(t, lim, fmt.Sprintf("cold-%d", calls), l) // One request each: TAT one interval ahead.
	}
	if got, want := lim.Keys(), sweepEvery-l.Rate; got != want {
		t.Fatalf("before the sweep the limiter holds %d keys, want %d", got, want)
	}

	clock.Advance(l.Interval()) // Every cold key has recovered; hot has not.
	// Call number 4096 sweeps before it counts, so hot earns exactly one request back.
	if res := allow(t, lim, "hot", l); !res.Allowed {
		t.Fatalf("hot after one interval: %+v, want allowed", res)
	}
	if got := lim.Keys(); got != 1 {
		t.Fatalf("after the sweep the limiter holds %d keys, want 1 (only the unrecovered hot key)", got)
	}
	if res := allow(t, lim, "hot", l); res.Allowed || res.RetryAfter != l.Interval() {
		t.Fatalf("hot was forgotten by the sweep: %+v, want rejected for %s", res, l.Interval())
	}
	spendBurst(t, lim, "cold-2", l) // A swept key behaves as new: a full burst.
}

func TestRedisLimitersOnOnePrefixShareACounter(t *testing.T) {
	url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
	// Two clients stand for two replicas (or two services) of the API.
	replicas := []ratelimit.Limiter{
		ratelimit.NewRedis(openRedis(t, url), prefix),
		ratelimit.NewRedis(openRedis(t, url), prefix),
	}
	start := time.Now()
	for i := range perMinute.Rate {
		if res := allow(t, replicas[i%2], "ip", perMinute); !res.Allowed {
			t.Fatalf("request %d was rejected; the burst is %d across replicas", i+1, perMinute.Rate)
		}
	}
	for _, r := range replicas {
		requireRejected(t, r, "ip", perMinute, start)
	}
}

func TestRedisPrefixesAreIndependent(t *testing.T) {
	url := testkit.RedisURL(t)
	a := ratelimit.NewRedis(openRedis(t, url), testkit.NewRedisPrefix(t))
	b := ratelimit.NewRedis(openRedis(t, url), testkit.NewRedisPrefix(t))
	start := time.Now()
	spendBurst(t, a, "ip", perMinute)
	requireRejected(t, a, "ip", perMinute, start)
	spendBurst(t, b, "ip", perMinute)
}

// logLines returns the non-empty lines written to buf.
func logLines(buf *testkit.SyncBuffer) []string {
	var out []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestFailOpenAdmitsRequestsWhileRedisIsDown(t *testing.T) {
	t.Parallel() // The first call waits for the dial to fail.
	rdb, err := redisx.Open("redis://127.0.0.1:1/0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	lim, reg, logs := newFailOpen(ratelimit.NewRedis(rdb, "sntest:"))

	const calls = 3
	for i := range calls {
		res, err := lim.Allow(context.Background(), "ip", perMinute)
		if err != nil || !res.Allowed {
			t.Fatalf("call %d: (%+v, %v), want allowed without error", i+1, res, err)
		}
	}
	if got := testkit.Metric(t, reg, "sharenote_ratelimit_errors_total"); got != calls {
		t.Errorf("sharenote_ratelimit_errors_total = %v, want %d", got, calls)
	}
	lines := logLines(logs)
	if len(lines) != 1 {
		t.Fatalf("logged %d lines for %d failures within a minute, want 1:\n%s", len(lines), calls, logs.String())
	}
	var rec struct{ Level, Err string }
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil || rec.Level != "WARN" || rec.Err == "" {
		t.Errorf("log line %s: want a WARN with the err key", lines[0])
	}
}

// flaky is a limiter whose backend can go down; it counts the checks that reach it.
type flaky struct {
	down  atomic.Bool
	calls atomic.Int64
	next  ratelimit.Limiter
}

func newFlaky() *flaky { return &flaky{next: ratelimit.NewMemory(testkit.NewClock().Now)} }

func (f *flaky) Allow(ctx context.Context, key string, l ratelimit.Limit) (ratelimit.Result, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return ratelimit.Result{}, errors.New("connection refused")
	}
	return f.next.Allow(ctx, key, l)
}

func newFailOpen(next ratelimit.Limiter) (*ratelimit.FailOpen, *prometheus.Registry, *testkit.SyncBuffer) {
	reg, logs := prometheus.NewRegistry(), &testkit.SyncBuffer{}
	return ratelimit.NewFailOpen(next, slog.New(slog.NewJSONHandler(logs, nil)), reg), reg, logs
}

func TestFailOpenLogsOncePerInterval(t *testing.T) {
	backend := newFlaky()
	backend.down.Store(true)
	lim, reg, logs := newFailOpen(backend)
	lim.SetTimings(time.Hour, 0) // No cooldown: every check reaches the failing backend.

	// Concurrent failures inside one interval log once between them.
	const workers = 50
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			if res, err := lim.Allow(context.Background(), "ip", perMinute); err != nil || !res.Allowed {
				t.Errorf("(%+v, %v), want allowed without error", res, err)
			}
		})
	}
	wg.Wait()
	if n := len(logLines(logs)); n != 1 {
		t.Fatalf("%d concurrent failures logged %d lines, want 1", workers, n)
	}
	if got := testkit.Metric(t, reg, "sharenote_ratelimit_errors_total"); got != workers {
		t.Fatalf("sharenote_ratelimit_errors_total = %v, want %d (every failure counts)", got, workers)
	}

	// Once the interval has passed, the next failure logs again: an outage that lasts is
	// not silenced for ever.
	lim.SetTimings(0, 0)
	allow(t, lim, "ip", perMinute)
	if n := len(logLines(logs)); n != 2 {
		t.Fatalf("after the interval %d lines, want 2", n)
	}
}

func TestFailOpenSkipsTheBackendDuringTheCooldown(t *testing.T) {
	backend := newFlaky()
	backend.down.Store(true)
	lim, reg, _ := newFailOpen(backend)
	lim.SetTimings(time.Hour, time.Hour)

	const calls = 10
	for i := range calls {
		if res := allow(t, lim, "ip", perMinute); !res.Allowed {
			t.Fatalf("call %d during an outage was rejected", i+1)
		}
	}
	backend.down.Store(false) // Even a recovered backend is left alone until the cooldown ends.
	allow(t, lim, "ip", perMinute)
	if got := backend.calls.Load(); got != 1 {
		t.Fatalf("the backend was asked %d times, want once: the cooldown must spare a down Redis and the request its timeout", got)
	}
	if got := testkit.Metric(t, reg, "sharenote_ratelimit_errors_total"); got != calls+1 {
		t.Fatalf("sharenote_ratelimit_errors_total = %v, want %d (skipped checks count too)", got, calls+1)
	}
}

func TestFailOpenEnforcesLimitsAgainAfterTheCooldown(t *testing.T) {
	backend := newFlaky()
	backend.down.Store(true)
	lim, _, _ := newFailOpen(backend)
	lim.SetTimings(time.Hour, 0) // The cooldown ends at the moment of the failure.

	allow(t, lim, "ip", perMinute)
	backend.down.Store(false)
	spendBurst(t, lim, "ip", perMinute)
	if res := allow(t, lim, "ip", perMinute); res.Allowed {
		t.Fatal("after the outage FailOpen still admits everything; want the backend's rejection")
	}
}

func TestFailOpenPassesDecisionsThrough(t *testing.T) {
	lim, reg, logs := newFailOpen(ratelimit.NewMemory(testkit.NewClock().Now))
	spendBurst(t, lim, "ip", perMinute)
	if res := allow(t, lim, "ip", perMinute); res.Allowed || res.RetryAfter != perMinute.Interval() {
		t.Fatalf("over the limit through FailOpen: %+v, want the backend's rejection", res)
	}
	if got := testkit.Metric(t, reg, "sharenote_ratelimit_errors_total"); got != 0 {
		t.Errorf("sharenote_ratelimit_errors_total = %v with a healthy backend, want 0", got)
	}
	if logs.String() != "" {
		t.Errorf("logged with a healthy backend: %s", logs.String())
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	cases := []struct {
		name string
		d    time.Duration
		want int
	}{
		{"zero is at least one second", 0, 1},
		{"negative is at least one second", -time.Second, 1},
		{"a nanosecond rounds up to one second", time.Nanosecond, 1},
		{"just under a second is one second", 999 * time.Millisecond, 1},
		{"a whole second stays one", time.Second, 1},
		{"just over a second rounds up", time.Second + time.Nanosecond, 2},
		{"one and a half seconds rounds up", 1500 * time.Millisecond, 2},
		{"the auth interval is six seconds", ratelimit.Auth.Interval(), 6},
		{"the all-API interval is one second", ratelimit.AllAPI.Interval(), 1},
		{"a minute is sixty", time.Minute, 60},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ratelimit.RetryAfterSeconds(tc.d); got != tc.want {
				t.Fatalf("RetryAfterSeconds(%s) = %d, want %d", tc.d, got, tc.want)
			}
		})
	}
}

func TestMiddlewareAnswers429WithRetryAfter(t *testing.T) {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	r.Use(errs.Middleware(slog.New(slog.DiscardHandler), nil))
	l := ratelimit.Limit{Name: "t", Rate: 1, Period: 90 * time.Second}
	r.GET("/", ratelimit.Middleware(ratelimit.NewMemory(testkit.NewClock().Now), l, func(*gin.Context) string { return "ip" }),
		func(c *gin.Context) { c.Status(http.StatusNoContent) })

	get := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		return w
	}
	if w := get(); w.Code != http.StatusNoContent {
		t.Fatalf("first request: %d, want 204", w.Code)
	}
	w := get()
	var body struct{ Error string }
	_ = json.Unmarshal(w.Body.Bytes(), &body)
	if w.Code != http.StatusTooManyRequests || body.Error != "rate_limited" || w.Header().Get("Retry-After") != "90" {
		t.Fatalf("second request: %d %s Retry-After %q, want 429 rate_limited with Retry-After 90", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
}

// cancelOnSend cancels a request's context while its command is on the way to Redis, as a
// client that hangs up mid-request does.
type cancelOnSend struct{}

type cancelKey struct{}

func (cancelOnSend) DialHook(next redis.DialHook) redis.DialHook { return next }

func (cancelOnSend) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cancel, ok := ctx.Value(cancelKey{}).(context.CancelFunc); ok {
			cancel()
		}
		return next(ctx, cmd)
	}
}

func (cancelOnSend) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func TestRequestsCancelledByTheirClientNeitherOpenNorSpendTheLimit(t *testing.T) {
	type limiter struct {
		name string
		new  func(t *testing.T) (ratelimit.Limiter, *prometheus.Registry)
		// viaRedis is whether a check reaches Redis, where a context can end mid-call.
		viaRedis bool
	}
	redisClient := func(t *testing.T) *redis.Client {
		rdb := openRedis(t, testkit.RedisURL(t))
		rdb.AddHook(cancelOnSend{})
		return rdb
	}
	limiters := []limiter{
		{"redis", func(t *testing.T) (ratelimit.Limiter, *prometheus.Registry) {
			lim, reg, _ := newFailOpen(ratelimit.NewRedis(redisClient(t), testkit.NewRedisPrefix(t)))
			return lim, reg
		}, true},
		{"memory", func(t *testing.T) (ratelimit.Limiter, *prometheus.Registry) {
			lim, reg, _ := newFailOpen(ratelimit.NewMemory(testkit.NewClock().Now))
			return lim, reg
		}, false},
		{"batched", func(t *testing.T) (ratelimit.Limiter, *prometheus.Registry) {
			reg := prometheus.NewRegistry()
			return newBatched(t, redisClient(t), testkit.NewRedisPrefix(t), ratelimit.WithRegisterer(reg)), reg
		}, true},
	}
	contexts := []struct {
		name string
		ctx  func(t *testing.T) context.Context
	}{
		{"cancelled", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
		{"past its deadline", func(t *testing.T) context.Context {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			t.Cleanup(cancel)
			return ctx
		}},
		{"cancelled mid-call", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			return context.WithValue(ctx, cancelKey{}, cancel)
		}},
	}
	for _, lt := range limiters {
		t.Run(lt.name, func(t *testing.T) {
			lim, reg := lt.new(t)
			l := ratelimit.Auth // Ten a minute: nothing is earned back while the test runs.
			allowed, normalAllowed := 0, 0
			for i := range 100 {
				if i%2 == 0 {
					res := allow(t, lim, "ip", l)
					if res.Allowed {
						allowed++
						normalAllowed++
					}
					continue
				}
				c := contexts[i/2%len(contexts)]
				ctx := c.ctx(t)
				res, err := lim.Allow(ctx, "ip", l)
				if err != nil && !errors.Is(err, ctx.Err()) {
					t.Fatalf("call %d, %s: %v, want only the context's own error", i, c.name, err)
				}
				if err == nil && res.Allowed {
					allowed++
				}
			}
			if allowed > l.Rate {
				t.Fatalf("%d of 100 requests allowed, half of them with ended contexts; want at most the burst of %d", allowed, l.Rate)
			}
			if !lt.viaRedis {
				return
			}
			// Ended contexts are no failure of Redis: none is counted, and (with FailOpen)
			// the normal requests still get exactly the burst.
			errName := "sharenote_ratelimit_errors_total"
			if lt.name == "batched" {
				errName = "sharenote_ratelimit_sync_errors_total"
			}
			if got := testkit.Metric(t, reg, errName); got != 0 {
				t.Errorf("%s = %v, want 0", errName, got)
			}
			if lt.name == "redis" && normalAllowed != l.Rate {
				t.Errorf("%d normal requests allowed, want the burst of %d", normalAllowed, l.Rate)
			}
		})
	}
}

func TestMiddlewareAbandonsTheRequestOfAClientThatHasGone(t *testing.T) {
	gin.SetMode(gin.TestMode)
	logs := &testkit.SyncBuffer{}
	lim, _, _ := newFailOpen(ratelimit.NewMemory(testkit.NewClock().Now))
	r := gin.New()
	r.Use(errs.Middleware(slog.New(slog.NewJSONHandler(logs, nil)), nil))
	r.GET("/", ratelimit.Middleware(lim, perMinute, func(*gin.Context) string { return "ip" }),
		func(c *gin.Context) { c.Status(http.StatusNoContent) })

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
	if w.Code != 499 || w.Body.Len() != 0 {
		t.Fatalf("a gone client's request: %d %q, want 499 without a body", w.Code, w.Body)
	}
	if logs.String() != "" {
		t.Fatalf("a gone client was logged as a failure: %s", logs.String())
	}
}
