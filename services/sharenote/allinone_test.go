package sharenote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/ratelimit"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/sharenote"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func start(t *testing.T, b testkit.Backend, opts ...testkit.Option) *testkit.Server {
	t.Helper()
	return testkit.StartServer(t, b, sharenote.Program.Targets, opts...)
}

func settings(t *testing.T, s *testkit.Server, token string) *testkit.Response {
	t.Helper()
	return s.Do(t, testkit.Request{Method: "GET", Path: "/api/user/settings", Token: token})
}

func TestBearerTokens(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		clock := testkit.NewClock()
		s := start(t, b, testkit.WithClock(clock))
		acc := s.NewAccount(t, "ada")
		settings(t, s, acc.Token).Expect(t, http.StatusOK, "")

		var unauthorized []byte
		for name, header := range map[string]string{
			"missing header":  "",
			"wrong scheme":    "Basic " + acc.Token,
			"no token":        "Bearer ",
			"unknown token":   "Bearer snt_unknown",
			"token with junk": "Bearer " + acc.Token + "x",
		} {
			resp := s.Do(t, testkit.Request{Method: "GET", Path: "/api/user/settings", Header: map[string]string{"Authorization": header}})
			resp.Expect(t, http.StatusUnauthorized, "unauthorized")
			if unauthorized != nil && !bytes.Equal(unauthorized, resp.Body) {
				t.Errorf("%s: body %s differs from %s", name, resp.Body, unauthorized)
			}
			unauthorized = resp.Body
		}

		clock.Advance(2*time.Hour - time.Millisecond)
		settings(t, s, acc.Token).Expect(t, http.StatusOK, "")
		clock.Advance(time.Millisecond)
		settings(t, s, acc.Token).Expect(t, http.StatusUnauthorized, "unauthorized")
	})
}

func TestDeactivatedLicenseTokensAre401(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc := s.NewAccount(t, "revoked")
		settings(t, s, acc.Token).Expect(t, http.StatusOK, "")
		if err := s.App.Deps().Accounts.Deactivate(context.Background(), acc.LicenseKey); err != nil {
			t.Fatal(err)
		}
		settings(t, s, acc.Token).Expect(t, http.StatusUnauthorized, "unauthorized")
	})
}

func TestSixtyFirstMutationOfAnAccountIsLimitedWhileReadsPass(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc := s.NewAccount(t, "busy")
		other := s.NewAccount(t, "calm")
		patch := func(token string) *testkit.Response {
			return s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: token, JSON: map[string]any{"theme": "dark"}})
		}
		start := time.Now()
		allowed := 0
		for patch(acc.Token).Status == http.StatusOK {
			allowed++
			if allowed > 200 {
				t.Fatal("mutations are not limited")
			}
		}
		assertBurst(t, allowed, ratelimit.Mutation, time.Since(start))
		resp := patch(acc.Token).Expect(t, http.StatusTooManyRequests, "rate_limited")
		if resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
		s.Do(t, testkit.Request{Method: "PUT", Path: "/api/user/settings", Token: acc.Token, JSON: map[string]any{}}).
			Expect(t, http.StatusTooManyRequests, "rate_limited")
		settings(t, s, acc.Token).Expect(t, http.StatusOK, "")
		patch(other.Token).Expect(t, http.StatusOK, "")
	})
}

func TestSixHundredAndFirstRequestOfAnIPIsLimited(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		start := time.Now()
		allowed := 0
		for {
			resp := s.Do(t, testkit.Request{Method: "GET", Path: "/api/user/settings"})
			if resp.Status == http.StatusTooManyRequests {
				resp.Expect(t, http.StatusTooManyRequests, "rate_limited")
				break
			}
			resp.Expect(t, http.StatusUnauthorized, "unauthorized")
			if allowed++; allowed > 2000 {
				t.Fatal("requests are not limited")
			}
		}
		assertBurst(t, allowed, ratelimit.AllAPI, time.Since(start))
		// Unknown routes count too, and are limited once the budget is gone.
		s.Do(t, testkit.Request{Method: "GET", Path: "/nowhere"}).Expect(t, http.StatusTooManyRequests, "rate_limited")
	})
}

func TestIPv6ClientsAreLimitedPerSlash64(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b, testkit.WithEnv("SHARE_TRUSTED_PROXIES", "127.0.0.1/32"))
		from := func(addr string) *testkit.Response {
			return s.Do(t, testkit.Request{Method: "GET", Path: "/nowhere", Header: map[string]string{"X-Forwarded-For": addr}})
		}
		began := time.Now()
		allowed := 0
		// A subscriber rotating through the addresses of its /64 is one client.
		for i := 1; ; i++ {
			resp := from(fmt.Sprintf("2001:db8:1:2:%x::%x", i%7, i))
			if resp.Status == http.StatusTooManyRequests {
				break
			}
			resp.Expect(t, http.StatusNotFound, "not_found")
			if allowed++; allowed > 2000 {
				t.Fatal("an IPv6 /64 is not limited as one client")
			}
		}
		assertBurst(t, allowed, ratelimit.AllAPI, time.Since(began))
		// Another /64 is another client.
		from("2001:db8:1:3::1").Expect(t, http.StatusNotFound, "not_found")
	})
}

// assertBurst checks that exactly the burst of l was admitted, plus at most the requests
// GCRA earns back during the elapsed real time (Redis uses its own clock; the in-process
// limiter runs on the test's frozen clock and admits exactly the burst).
func assertBurst(t *testing.T, allowed int, l ratelimit.Limit, elapsed time.Duration) {
	t.Helper()
	earned := int(elapsed / l.Interval())
	if allowed < l.Rate || allowed > l.Rate+earned+1 {
		t.Fatalf("%s limit admitted %d requests in %v, want %d (+%d earned)", l.Name, allowed, elapsed, l.Rate, earned)
	}
}

func TestTwoServersOnOneRedisShareOneLimit(t *testing.T) {
	b := testkit.PostgresBackend(t)
	a, c := start(t, b), start(t, b)
	login := func(s *testkit.Server) int {
		return s.Do(t, testkit.Request{Method: "POST", Path: "/api/auth/publish", JSON: map[string]string{"license_key": "k", "instance_id": "i"}}).Status
	}
	for i := range 10 {
		s := a
		if i%2 == 1 {
			s = c
		}
		if code := login(s); code != http.StatusUnauthorized {
			t.Fatalf("request %d: %d, want 401", i, code)
		}
	}
	if code := login(a); code != http.StatusTooManyRequests {
		t.Errorf("11th request on server A: %d, want 429", code)
	}
	if code := login(c); code != http.StatusTooManyRequests {
		t.Errorf("12th request on server B: %d, want 429", code)
	}
}

func TestRoutingErrors(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		s.Do(t, testkit.Request{Method: "GET", Path: "/api/nothing-here"}).Expect(t, http.StatusNotFound, "not_found")
		s.Do(t, testkit.Request{Method: "GET", Path: "/api/user/settings/"}).Expect(t, http.StatusNotFound, "not_found")
		cases := []struct{ method, path, allow string }{
			{"DELETE", "/api/user/settings", "GET, HEAD, PATCH, PUT"},
			{"GET", "/api/auth/publish", "POST"},
			{"PUT", "/api/auth/publish", "POST"},
		}
		for _, c := range cases {
			resp := s.Do(t, testkit.Request{Method: c.method, Path: c.path}).Expect(t, http.StatusMethodNotAllowed, "method_not_allowed")
			if got := resp.Header.Get("Allow"); got != c.allow {
				t.Errorf("%s %s: Allow = %q, want %q", c.method, c.path, got, c.allow)
			}
		}
	})
}

func TestOperability(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc := s.NewAccount(t, "observed")
		s.Do(t, testkit.Request{Method: "POST", Path: "/api/auth/publish",
			JSON: map[string]string{"license_key": acc.LicenseKey, "instance_id": acc.InstanceID}}).Expect(t, 200, "")
		s.Do(t, testkit.Request{Method: "POST", Path: "/api/auth/publish",
			JSON: map[string]string{"license_key": acc.LicenseKey, "instance_id": "wrong"}}).Expect(t, 401, "")
		settings(t, s, acc.Token).Expect(t, 200, "")
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: acc.Token, JSON: map[string]any{"name": "Ada"}}).Expect(t, 200, "")

		t.Run("health and readiness", func(t *testing.T) {
			if r := s.Admin(t, "/healthz"); r.Status != 200 {
				t.Errorf("/healthz = %d", r.Status)
			}
			if r := s.Admin(t, "/readyz"); r.Status != 200 {
				t.Errorf("/readyz = %d %s", r.Status, r.Body)
			}
		})
		t.Run("metrics by route and status", func(t *testing.T) {
			m := string(s.Admin(t, "/metrics").Body)
			for _, want := range []string{
				`sharenote_http_requests_total{method="POST",route="/api/auth/publish",status="200"} 1`,
				`sharenote_http_requests_total{method="POST",route="/api/auth/publish",status="401"} 1`,
				`sharenote_http_requests_total{method="GET",route="/api/user/settings",status="200"} 1`,
				`sharenote_http_request_duration_seconds_bucket{method="PATCH",route="/api/user/settings",status="200",le="+Inf"} 1`,
				`go_sql_open_connections{db_name="sharenote"}`,
			} {
				if !strings.Contains(m, want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		})
		t.Run("one JSON log line per request, without secrets", func(t *testing.T) {
			var requests int
			// The four requests of the subtests above, whose lines may still be on their way.
			logs := s.Logs.Await(t, "four request lines", func(l string) bool { return strings.Count(l, `"msg":"request"`) >= 4 })
			for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("log line is not JSON: %q", line)
				}
				if rec["msg"] == "request" {
					requests++
					// The fields docs/operations.md names.
					for _, field := range []string{"time", "level", "service", "method", "route", "path", "status", "bytes", "duration_us", "ip", "request_id"} {
						if rec[field] == nil {
							t.Errorf("request line lacks %s: %s", field, line)
						}
					}
				}
			}
			if requests != 4 {
				t.Errorf("%d request lines, want 4", requests)
			}
			for name, secret := range map[string]string{"license key": acc.LicenseKey, "instance id": acc.InstanceID, "token": acc.Token} {
				if strings.Contains(logs, secret) {
					t.Errorf("the logs contain the %s", name)
				}
			}
		})
	})
}

// TestConcurrentMutationsAllLand sends the settings changes of twenty accounts at once,
// on SQLite (one writer at a time: a second connection writing at once would be refused
// "database is locked", answered 503) and on Postgres:
// every change is answered 200 and stored.
func TestConcurrentMutationsAllLand(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		accs := make([]testkit.Account, 20)
		for i := range accs {
			accs[i] = s.NewAccount(t, fmt.Sprintf("writer%d", i))
		}
		statuses := make([]int, len(accs))
		ready := make(chan struct{})
		var wg sync.WaitGroup
		for i, acc := range accs {
			wg.Go(func() {
				req, _ := http.NewRequest("PATCH", s.URL+"/api/user/settings", strings.NewReader(fmt.Sprintf(`{"name":"Writer %d"}`, i)))
				req.Header.Set("Authorization", "Bearer "+acc.Token)
				req.Header.Set("Content-Type", "application/json")
				<-ready
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					statuses[i] = -1
					return
				}
				_ = resp.Body.Close()
				statuses[i] = resp.StatusCode
			})
		}
		close(ready)
		wg.Wait()
		for i, acc := range accs {
			if statuses[i] != http.StatusOK {
				t.Errorf("account %d: PATCH settings answered %d, want 200", i, statuses[i])
				continue
			}
			var got struct{ Settings struct{ Name string } }
			settings(t, s, acc.Token).Expect(t, 200, "").Decode(t, &got)
			if want := fmt.Sprintf("Writer %d", i); got.Settings.Name != want {
				t.Errorf("account %d: name %q, want %q", i, got.Settings.Name, want)
			}
		}
	})
}
