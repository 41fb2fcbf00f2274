// Package ratelimit enforces the API's protective rate limits (docs/api.md "Rate limits")
// with the generic cell rate algorithm (GCRA). A limit of N per period admits a burst of
// N and then one request every period/N. Counters live in Redis (redis_rate) so that
// every replica and service shares them; the embedded default uses an in-process limiter
// with the same arithmetic.
//
// ratelimit.go holds the limits, the Limiter interface and the middleware; memory.go the
// in-process limiter; redis.go the Redis limiter and FailOpen; batched*.go the Batched
// limiter, which decides in process and reconciles with Redis in batches.
package ratelimit

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/sharenote/sharenote/libs/errs"
)

// Limit is a rate of Rate requests per Period, with a burst of Rate.
type Limit struct {
	Name   string
	Rate   int
	Period time.Duration
}

// The limits of docs/api.md "Rate limits".
var (
	// AllAPI applies to every request, per client IP.
	AllAPI = Limit{Name: "api", Rate: 600, Period: time.Minute}
	// Auth applies to POST /api/auth/publish, per client IP, on top of AllAPI.
	Auth = Limit{Name: "auth", Rate: 10, Period: time.Minute}
	// Mutation applies to the authenticated mutations (docs/api.md "Rate limits"), per
	// account.
	Mutation = Limit{Name: "mutation", Rate: 60, Period: time.Minute}
)

// Interval is the time in which one more request is earned.
func (l Limit) Interval() time.Duration { return l.Period / time.Duration(l.Rate) }

// Result is the outcome of one Allow call.
type Result struct {
	Allowed bool
	// RetryAfter is how long until the next request would be allowed, when not Allowed.
	RetryAfter time.Duration
	// Known reports whether the key's budget below is known. The exact limiters (Redis,
	// Memory) always know it; FailOpen does not while it admits requests without asking
	// Redis, and Batched, whose views lag the shared counter, never reports it.
	Known bool
	// Remaining is how many more requests the key could make now: after this request
	// when it was allowed, none when it was not.
	Remaining int
	// ResetAfter is how long until the key's whole burst of Rate requests is back.
	ResetAfter time.Duration
}

// Limiter admits or rejects one request for key under limit l.
type Limiter interface {
	Allow(ctx context.Context, key string, l Limit) (Result, error)
}

// Option adjusts Middleware.
type Option func(*middleware)

type middleware struct{ budget bool }

// WithBudgetHeaders makes Middleware send the key's budget on every answer of the route,
// allowed or not, as the IETF httpapi ratelimit-headers draft's three fields:
// RateLimit-Limit (the burst, Rate), RateLimit-Remaining (the requests allowed now) and
// RateLimit-Reset (whole seconds until the whole burst is back), so that a client can
// pace itself instead of meeting 429. They are left out when the limiter does not know
// the budget (Result.Known), as while FailOpen admits requests without Redis.
func WithBudgetHeaders() Option { return func(m *middleware) { m.budget = true } }

// Middleware rejects requests over l, keyed by key(c), with 429 rate_limited and a
// Retry-After of whole seconds, at least 1, which the message repeats. A request whose
// context ends during the check is aborted with status 499 (client closed request) and
// no body.
func Middleware(lim Limiter, l Limit, key func(*gin.Context) string, opts ...Option) gin.HandlerFunc {
	var m middleware
	for _, o := range opts {
		o(&m)
	}
	return func(c *gin.Context) {
		res, err := lim.Allow(c.Request.Context(), key(c), l)
		if err != nil {
			if c.Request.Context().Err() != nil {
				// The client has gone: there is no one to answer, and nothing failed here.
				c.AbortWithStatus(errs.StatusClientClosedRequest)
				return
			}
			errs.Abort(c, errs.Internal(err))
			return
		}
		if m.budget && res.Known {
			// Set before the handler runs, so that every answer carries them: success,
			// the handler's errors and the 429 below alike.
			h := c.Writer.Header()
			h.Set("RateLimit-Limit", strconv.Itoa(l.Rate))
			h.Set("RateLimit-Remaining", strconv.Itoa(max(0, res.Remaining)))
			h.Set("RateLimit-Reset", strconv.Itoa(max(0, int(math.Ceil(res.ResetAfter.Seconds())))))
		}
		if !res.Allowed {
			secs := RetryAfterSeconds(res.RetryAfter)
			c.Header("Retry-After", strconv.Itoa(secs))
			errs.Abort(c, errs.Newf(http.StatusTooManyRequests, errs.RateLimited, "Too many requests; retry in %d s.", secs))
			return
		}
		c.Next()
	}
}

// RetryAfterSeconds rounds d up to whole seconds, at least 1.
func RetryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
