package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Redis is the distributed GCRA limiter: one Lua call per request against shared counters,
// so a limit holds across every replica and service.
type Redis struct {
	rl     *redis_rate.Limiter
	prefix string
}

// NewRedis returns a limiter whose keys all start with prefix.
func NewRedis(rdb *redis.Client, prefix string) *Redis {
	return &Redis{rl: redis_rate.NewLimiter(rdb), prefix: prefix}
}

// Allow implements Limiter.
func (r *Redis) Allow(ctx context.Context, key string, l Limit) (Result, error) {
	res, err := r.rl.Allow(ctx, r.prefix+l.Name+":"+key, redis_rate.Limit{Rate: l.Rate, Burst: l.Rate, Period: l.Period})
	if err != nil {
		return Result{}, fmt.Errorf("rate limit %s: %w", l.Name, err)
	}
	// Redis's clock counts microseconds; rounding to them drops the float error of the
	// script's arithmetic, which would otherwise round 1.0000000001 s up to 2 whole seconds.
	return Result{Allowed: res.Allowed > 0, RetryAfter: res.RetryAfter.Round(time.Microsecond),
		Known: true, Remaining: res.Remaining, ResetAfter: res.ResetAfter.Round(time.Microsecond)}, nil
}

// FailOpen admits requests when the limiter behind it fails (Redis down). The limits are
// protective, not a billing boundary, so an outage of Redis must not take the API down
// with it. After a failure it does not ask the limiter again for a cooldown, so that an
// outage does not add a timeout to every request. Every check failed or skipped is counted
// in sharenote_ratelimit_errors_total; the outage is logged at most once per logEvery.
type FailOpen struct {
	next      Limiter
	log       *slog.Logger
	errors    prometheus.Counter
	logEvery  time.Duration
	cooldown  time.Duration
	lastLog   atomic.Int64
	openUntil atomic.Int64
}

// NewFailOpen wraps next and registers its error counter on reg.
func NewFailOpen(next Limiter, log *slog.Logger, reg prometheus.Registerer) *FailOpen {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sharenote_ratelimit_errors_total",
		Help: "Rate-limit checks that failed or were skipped (Redis unavailable) and were allowed through.",
	})
	reg.MustRegister(c)
	return &FailOpen{next: next, log: log, errors: c, logEvery: time.Minute, cooldown: 2 * time.Second}
}

// Allow implements Limiter. Its only errors are ctx's: a request whose client hung up or
// whose deadline passed says nothing about Redis, so it neither opens the breaker nor
// counts as a failure, and the caller can abort.
func (f *FailOpen) Allow(ctx context.Context, key string, l Limit) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	now := time.Now().UnixNano()
	if now < f.openUntil.Load() {
		f.errors.Inc()
		return Result{Allowed: true}, nil
	}
	res, err := f.next.Allow(ctx, key, l)
	if err == nil {
		return res, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return Result{}, ctxErr
	}
	f.openUntil.Store(now + int64(f.cooldown))
	f.errors.Inc()
	if last := f.lastLog.Load(); now-last >= int64(f.logEvery) && f.lastLog.CompareAndSwap(last, now) {
		f.log.WarnContext(ctx, "rate limiter unavailable, allowing requests", "err", err)
	}
	return Result{Allowed: true}, nil
}
