package sharenote_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/ratelimit"
	"github.com/sharenote/sharenote/libs/testkit"
)

// budgetFields are the IETF httpapi draft's RateLimit fields.
var budgetFields = []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}

// budgetOf reads the three fields of resp, failing the test unless each is a whole number.
func budgetOf(t *testing.T, what string, resp *testkit.Response) (limit, remaining, reset int) {
	t.Helper()
	var v [3]int
	for i, name := range budgetFields {
		n, err := strconv.Atoi(resp.Header.Get(name))
		if err != nil || n < 0 {
			t.Fatalf("%s: %d answer has %s %q, want whole seconds or requests", what, resp.Status, name, resp.Header.Get(name))
		}
		v[i] = n
	}
	return v[0], v[1], v[2]
}

// noBudget fails the test if resp carries any RateLimit field.
func noBudget(t *testing.T, what string, resp *testkit.Response) {
	t.Helper()
	for _, name := range budgetFields {
		if v, ok := resp.Header[http.CanonicalHeaderKey(name)]; ok {
			t.Errorf("%s: %d answer carries %s %q, want none", what, resp.Status, name, v)
		}
	}
}

// budgetCheck checks the budget answers of one account against the number of mutations it
// made. On Redis, which counts on its own clock, one more request is earned back per
// second that passed since began; the in-process limiter runs on the frozen test clock.
type budgetCheck struct {
	realTime bool
	began    time.Time
}

// expect requires resp to say Limit 60 and spent mutations, and Reset to be the whole
// seconds until the budget is full (one request a second: the mutations still owed).
func (b budgetCheck) expect(t *testing.T, what string, resp *testkit.Response, spent int) {
	t.Helper()
	limit, remaining, reset := budgetOf(t, what, resp)
	earned := 0
	if b.realTime {
		earned = int(time.Since(b.began) / ratelimit.Mutation.Interval())
	}
	want := max(0, ratelimit.Mutation.Rate-spent)
	if limit != ratelimit.Mutation.Rate || remaining < want || remaining > want+earned {
		t.Errorf("%s: RateLimit-Limit %d, -Remaining %d; want 60 and %d (+%d earned)", what, limit, remaining, want, earned)
	}
	if resp.Status != http.StatusTooManyRequests && reset != limit-remaining {
		t.Errorf("%s: RateLimit-Reset %d with %d remaining, want %d: seconds until all 60 are back", what, reset, remaining, limit-remaining)
	}
}

// mutations are the five authenticated mutations (docs/api.md "Rate limits"), with what
// each needs.
func mutations(token, cuid string) []testkit.Request {
	return []testkit.Request{
		{Method: "POST", Path: "/api/publish", Token: token, Body: []byte("# Second"), ContentType: "text/markdown"},
		{Method: "PATCH", Path: "/api/notes/" + cuid, Token: token, JSON: map[string]any{"title": "Renamed"}},
		{Method: "PATCH", Path: "/api/user/settings", Token: token, JSON: map[string]any{"theme": "dark"}},
		{Method: "PUT", Path: "/api/user/settings", Token: token, JSON: map[string]any{"font": "mono"}},
		{Method: "POST", Path: "/api/unshare", Token: token, JSON: map[string]any{"cuid": cuid}},
	}
}

func TestMutationsCarryTheAccountsBudget(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		clock := testkit.NewClock()
		s := start(t, b, testkit.WithClock(clock))
		acc := s.NewAccount(t, "pacer")
		check := budgetCheck{realTime: b.RedisURL != "", began: time.Now()}

		resp := s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token, Body: []byte("# First"), ContentType: "text/markdown"})
		resp.Expect(t, http.StatusOK, "")
		check.expect(t, "first publish", resp, 1)
		var note struct{ CUID string }
		resp.Decode(t, &note)
		spent := 1
		for _, r := range mutations(acc.Token, note.CUID) {
			spent++
			what := r.Method + " " + r.Path
			check.expect(t, what, s.Do(t, r).Expect(t, http.StatusOK, ""), spent)
		}

		// Answers other than success carry the budget too, and such requests count.
		spent++
		resp = s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: acc.Token, JSON: map[string]any{"theme": "neon"}})
		check.expect(t, "a 400", resp.Expect(t, http.StatusBadRequest, "invalid_field"), spent)
		spent++
		resp = s.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]any{"cuid": note.CUID}})
		check.expect(t, "a 404", resp.Expect(t, http.StatusNotFound, "not_found"), spent)

		limited := spendBudget(t, s, acc.Token, spent)
		limit, remaining, reset := budgetOf(t, "429", limited)
		retry, _ := strconv.Atoi(limited.Header.Get("Retry-After"))
		if limit != 60 || remaining != 0 || reset < 60-check.elapsedSeconds() || reset > 60 || retry != 1 {
			t.Errorf("429: RateLimit %d/%d/%d, Retry-After %d; want 60/0/~60 (until full) and Retry-After 1 (until the next)", limit, remaining, reset, retry)
		}
		var body struct{ Message string }
		limited.Decode(t, &body)
		if want := fmt.Sprintf("Too many requests; retry in %d s.", retry); body.Message != want {
			t.Errorf("429 message %q, want %q", body.Message, want)
		}

		// The budget refills one request a second.
		wait := func(d time.Duration) { clock.Advance(d) }
		if check.realTime {
			wait = time.Sleep
		}
		wait(3 * time.Second)
		resp = s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: acc.Token, JSON: map[string]any{"theme": "light"}})
		_, remaining, reset = budgetOf(t, "after 3 s", resp.Expect(t, http.StatusOK, ""))
		if remaining < 2 || remaining > 3 || (!check.realTime && remaining != 2) || reset != 60-remaining {
			t.Errorf("3 s after the 429: RateLimit-Remaining %d, -Reset %d; want 2 (3 earned, 1 spent) and %d", remaining, reset, 60-remaining)
		}
	})
}

// elapsedSeconds is the whole seconds of real time since began, on Redis; else 0.
func (b budgetCheck) elapsedSeconds() int {
	if !b.realTime {
		return 0
	}
	return int(time.Since(b.began)/time.Second) + 1
}

// spendBudget makes mutations until one is limited, and returns that 429. On Redis a
// request is earned back every second, so it may take a few more than the budget.
func spendBudget(t *testing.T, s *testkit.Server, token string, spent int) *testkit.Response {
	t.Helper()
	for range 200 {
		resp := s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: token, JSON: map[string]any{"theme": "dark"}})
		if resp.Status == http.StatusTooManyRequests {
			return resp.Expect(t, http.StatusTooManyRequests, "rate_limited")
		}
		resp.Expect(t, http.StatusOK, "")
		spent++
	}
	t.Fatalf("mutations are not limited after %d", spent)
	return nil
}

func TestTwoServersOnOneRedisShareTheBudget(t *testing.T) {
	b := testkit.PostgresBackend(t)
	a, c := start(t, b), start(t, b)
	acc := a.NewAccount(t, "replicated")
	check := budgetCheck{realTime: true, began: time.Now()}
	patch := func(s *testkit.Server) *testkit.Response {
		return s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: acc.Token, JSON: map[string]any{"theme": "dark"}}).
			Expect(t, http.StatusOK, "")
	}
	for i := 1; i <= 4; i++ {
		check.expect(t, fmt.Sprintf("mutation %d on server A", i), patch(a), i)
	}
	check.expect(t, "mutation 5 on server B", patch(c), 5)
	check.expect(t, "mutation 6 on server A", patch(a), 6)
}

func TestBudgetIsLeftOutWhileTheLimiterFailsOpen(t *testing.T) {
	b := testkit.PostgresBackend(t)
	redis := testkit.StartRedis(t)
	b.RedisURL = redis.URL
	s := start(t, b)
	acc := s.NewAccount(t, "outage")
	patch := func() *testkit.Response {
		return s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: acc.Token, JSON: map[string]any{"theme": "dark"}}).
			Expect(t, http.StatusOK, "")
	}
	budgetCheck{realTime: true, began: time.Now()}.expect(t, "with Redis up", patch(), 1)
	redis.Stop()
	// Redis is back before the server closes, so that its final flush of the per-IP
	// counters does not fail the test.
	t.Cleanup(redis.Start)
	for i := range 3 {
		noBudget(t, fmt.Sprintf("mutation %d with Redis down", i+1), patch())
	}
}

func TestPerIPLimitAnswersRetryAfterOnly(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc := s.NewAccount(t, "crowded")
		for i := 0; ; i++ {
			if s.Do(t, testkit.Request{Method: "GET", Path: "/nowhere"}).Status == http.StatusTooManyRequests {
				break
			}
			if i > 2000 {
				t.Fatal("requests are not limited per IP")
			}
		}
		// On Redis a request per second is earned back; one may pass before the limit.
		for range 5 {
			resp := s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: acc.Token, JSON: map[string]any{"theme": "dark"}})
			if resp.Status != http.StatusTooManyRequests {
				continue
			}
			noBudget(t, "a per-IP 429", resp)
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 {
				t.Errorf("per-IP 429 with Retry-After %q, want whole seconds ≥ 1", resp.Header.Get("Retry-After"))
			}
			var body struct{ Message string }
			resp.Decode(t, &body)
			if body.Message != "Too many requests; retry in "+resp.Header.Get("Retry-After")+" s." {
				t.Errorf("per-IP 429 message %q does not say how long to wait", body.Message)
			}
			return
		}
		t.Fatal("no mutation met the per-IP limit")
	})
}
