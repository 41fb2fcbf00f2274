package ratelimit_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/ratelimit"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestBackendsReportTheBudget(t *testing.T) {
	l := perMinute // An interval of 6s: Redis earns nothing back while the test runs.
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			lim := b.new(t)
			start := time.Now()
			for i := 1; i <= l.Rate; i++ {
				res := allow(t, lim, "k", l)
				if !res.Allowed || !res.Known || res.Remaining != l.Rate-i {
					t.Fatalf("request %d: %+v, want allowed and known with %d remaining", i, res, l.Rate-i)
				}
				requireAbout(t, "ResetAfter", res.ResetAfter, time.Duration(i)*l.Interval(), time.Since(start))
			}
			res := allow(t, lim, "k", l)
			if res.Allowed || !res.Known || res.Remaining != 0 {
				t.Fatalf("over the limit: %+v, want rejected and known with none remaining", res)
			}
			// Reset is until the budget is full again, not until the next request.
			requireAbout(t, "ResetAfter", res.ResetAfter, l.Period, time.Since(start))
			requireAbout(t, "RetryAfter", res.RetryAfter, l.Interval(), time.Since(start))
		})
	}
}

// requireAbout requires got to be want, less at most the real time that passed (Redis
// counts with its own clock), within the 5ms that cover its floating-point times.
func requireAbout(t *testing.T, name string, got, want, passed time.Duration) {
	t.Helper()
	if got < want-passed-5*time.Millisecond || got > want+5*time.Millisecond {
		t.Fatalf("%s = %s, want about %s", name, got, want)
	}
}

func TestMemoryBudgetRefillsOnePerInterval(t *testing.T) {
	clock := testkit.NewClock()
	lim := ratelimit.NewMemory(clock.Now)
	l, iv := perMinute, perMinute.Interval()
	spendBurst(t, lim, "k", l)

	clock.Advance(2*iv + iv/2)
	res := allow(t, lim, "k", l)
	if !res.Allowed || res.Remaining != 1 || res.ResetAfter != l.Period-iv-iv/2 {
		t.Fatalf("2.5 intervals after the burst: %+v, want allowed, 1 remaining, full after %s", res, l.Period-iv-iv/2)
	}
	clock.Advance(l.Period)
	if res := allow(t, lim, "k", l); res.Remaining != l.Rate-1 || res.ResetAfter != iv {
		t.Fatalf("a period later: %+v, want the whole burst less this request", res)
	}
}

// budgetRouter serves GET / behind the middleware (with opts) and answers status.
func budgetRouter(lim ratelimit.Limiter, l ratelimit.Limit, status int, opts ...ratelimit.Option) func() *httptest.ResponseRecorder {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	r.Use(errs.Middleware(slog.New(slog.DiscardHandler), nil))
	r.GET("/", ratelimit.Middleware(lim, l, func(*gin.Context) string { return "acct" }, opts...), func(c *gin.Context) {
		if status >= http.StatusBadRequest {
			errs.Abort(c, errs.New(status, errs.InvalidField, "Bad."))
			return
		}
		c.Status(status)
	})
	return func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		return w
	}
}

// budget reads the three RateLimit fields; absent ones are -1.
func budget(h http.Header) (limit, remaining, reset int) {
	field := func(name string) int {
		v, err := strconv.Atoi(h.Get(name))
		if err != nil {
			return -1
		}
		return v
	}
	return field("RateLimit-Limit"), field("RateLimit-Remaining"), field("RateLimit-Reset")
}

func TestMiddlewareSendsTheBudgetOnEveryAnswer(t *testing.T) {
	l := ratelimit.Limit{Name: "t", Rate: 3, Period: 90 * time.Second} // An interval of 30s.
	clock := testkit.NewClock()
	for _, status := range []int{http.StatusOK, http.StatusBadRequest} {
		get := budgetRouter(ratelimit.NewMemory(clock.Now), l, status, ratelimit.WithBudgetHeaders())
		for i := 1; i <= l.Rate; i++ {
			w := get()
			if lim, rem, reset := budget(w.Header()); w.Code != status || lim != 3 || rem != 3-i || reset != 30*i {
				t.Fatalf("%d answer %d: %d with RateLimit %d/%d/%d, want %d with 3/%d/%d", status, i, w.Code, lim, rem, reset, status, 3-i, 30*i)
			}
		}
		w := get()
		var body struct{ Error, Message string }
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		lim, rem, reset := budget(w.Header())
		if w.Code != http.StatusTooManyRequests || lim != 3 || rem != 0 || reset != 90 || w.Header().Get("Retry-After") != "30" {
			t.Fatalf("over the limit: %d with RateLimit %d/%d/%d and Retry-After %q, want 429 with 3/0/90 and 30",
				w.Code, lim, rem, reset, w.Header().Get("Retry-After"))
		}
		if body.Message != "Too many requests; retry in 30 s." {
			t.Errorf("429 message %q does not say how long to wait", body.Message)
		}
	}
}

func TestMiddlewareLeavesTheBudgetOut(t *testing.T) {
	l := ratelimit.Limit{Name: "t", Rate: 1, Period: time.Minute}
	down := newFlaky()
	down.down.Store(true)
	failOpen, _, _ := newFailOpen(down)
	cases := []struct {
		name string
		get  func() *httptest.ResponseRecorder
	}{
		{"without WithBudgetHeaders", budgetRouter(ratelimit.NewMemory(testkit.NewClock().Now), l, http.StatusOK)},
		{"while the limiter fails open", budgetRouter(failOpen, l, http.StatusOK, ratelimit.WithBudgetHeaders())},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 2 {
				w := c.get()
				for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
					if v, ok := w.Header()[http.CanonicalHeaderKey(h)]; ok {
						t.Errorf("%d answer carries %s: %q", w.Code, h, v)
					}
				}
			}
		})
	}
}

func TestFailOpenReportsNoBudgetWhenItAdmitsBlindly(t *testing.T) {
	backend := newFlaky()
	lim, _, _ := newFailOpen(backend)
	if res := allow(t, lim, "k", perMinute); !res.Known || res.Remaining != perMinute.Rate-1 {
		t.Fatalf("healthy backend: %+v, want its budget passed through", res)
	}
	backend.down.Store(true)
	if res := allow(t, lim, "k", perMinute); !res.Allowed || res.Known {
		t.Fatalf("failed backend: %+v, want allowed with no budget", res)
	}
	if res := allow(t, lim, "k", perMinute); !res.Allowed || res.Known {
		t.Fatalf("during the cooldown: %+v, want allowed with no budget", res)
	}
}
