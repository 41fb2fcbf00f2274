package sharenote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/auth"
)

// metric returns the value of an unlabelled metric on s's admin listener (0 when absent).
func metric(t *testing.T, s *testkit.Server, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(s.Admin(t, "/metrics").Body)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// within polls cond every 10 ms until it holds, and fails the test unless that happens
// within limit of start. It returns how long it took from start.
func within(t *testing.T, start time.Time, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	for {
		if cond() {
			took := time.Since(start)
			if took > limit {
				t.Errorf("%s took %v, want within %v", what, took.Round(time.Millisecond), limit)
			}
			return took
		}
		if time.Since(start) > limit+3*time.Second {
			t.Fatalf("%s: still not after %v", what, time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertServedFromCache reads a cached note for 1.5 s and fails the test if s reloaded it:
// the entry is trusted beyond the one second an untrusted entry lives.
func assertServedFromCache(t *testing.T, s *testkit.Server, cuid string) {
	t.Helper()
	// A busy machine can stall the subscription's pong past the confirm window (a lapse,
	// counted) or drop it (a resubscription): each may reload the note once, as designed.
	// Without them, an entry is trusted beyond a second and never reloaded.
	excused := func() float64 {
		return metric(t, s, "sharenote_changefeed_lapses_total") + metric(t, s, "sharenote_changefeed_subscriptions_total")
	}
	loads, excuses := metric(t, s, "sharenote_readcache_loads_total"), excused()
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		content(t, s, cuid)
		time.Sleep(50 * time.Millisecond)
	}
	n := metric(t, s, "sharenote_readcache_loads_total") - loads
	// A lapse is counted when the subscription next shows life (its next pong, within
	// pingEvery of the end of the silence), so a reload may be seen before its lapse.
	for wait := time.Now().Add(2 * time.Second); n > excused()-excuses && time.Now().Before(wait); {
		time.Sleep(50 * time.Millisecond)
	}
	if lapses := excused() - excuses; n > lapses {
		t.Errorf("a cached note was reloaded %v times in 1.5 s with %v lapses or resubscriptions of the change feed, want at most that many", n, lapses)
	}
}

// getAtOnce sends n GETs of url at the same time and waits for their answers.
func getAtOnce(t *testing.T, url string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := http.Get(url)
			if err != nil {
				t.Error(err)
				return
			}
			_ = resp.Body.Close()
		})
	}
	wg.Wait()
}

// publishJSON publishes a note over HTTP and returns its cuid.
func publishJSON(t *testing.T, s *testkit.Server, token string, body map[string]any) string {
	t.Helper()
	var created struct{ CUID string }
	s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: token, JSON: body}).Expect(t, http.StatusOK, "").Decode(t, &created)
	return created.CUID
}

// content returns the public content of a note, or "" when it is not found.
func content(t *testing.T, s *testkit.Server, cuid string) (string, string) {
	t.Helper()
	resp := s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + cuid})
	if resp.Status == http.StatusNotFound {
		return "", ""
	}
	var n struct {
		Content    string
		Appearance struct{ Theme string }
	}
	resp.Expect(t, http.StatusOK, "").Decode(t, &n)
	return n.Content, n.Appearance.Theme
}

// awaitTrust waits until s's change feed is subscribed and an entry loaded now would be
// trusted beyond a second.
func awaitTrust(t *testing.T, s *testkit.Server) {
	t.Helper()
	within(t, time.Now(), 5*time.Second, "subscription", func() bool { return metric(t, s, "sharenote_changefeed_subscribed") == 1 })
}

func TestCachedReadsCostNoQueryAndNoRedisCommand(t *testing.T) {
	b := testkit.PostgresBackend(t)
	s := start(t, b, testkit.WithEnv("SHARE_TRUSTED_PROXIES", "127.0.0.1/32"))
	acc := s.NewAccount(t, "reader")
	id, images := publishWithImages(t, s, acc.Token, map[string]string{"content": "# Cached\n\n[[one.png]] ![[two.gif]]", "title": "Cached"})
	paths := []string{"/api/notes/" + id, "/s/" + id, "/api/og/" + id + ".png", images[0]}
	awaitTrust(t, s)
	for _, p := range paths {
		s.Do(t, testkit.Request{Method: "GET", Path: p}).Expect(t, http.StatusOK, "")
	}

	queries := testkit.CountQueries(t, s.App.DB())
	commands := testkit.MonitorRedis(t, b.RedisURL, b.RedisPrefix)
	// Two readers, each under the per-IP limit of 600 a minute.
	const reads = 1000
	for i := range reads {
		client := map[string]string{"X-Forwarded-For": "198.51.100." + strconv.Itoa(1+i%2)}
		s.Do(t, testkit.Request{Method: "GET", Path: paths[i%len(paths)], Header: client}).Expect(t, http.StatusOK, "")
	}
	time.Sleep(300 * time.Millisecond) // Let the limiter's batches reach Redis.
	if n := queries.Load(); n != 0 {
		t.Errorf("%d reads of a cached note ran %d SQL statements, want 0", reads, n)
	}
	// The per-IP limit reconciles with Redis in batches: a few commands per key and
	// flush, none per request.
	if n := commands.Load(); n > reads/10 {
		t.Errorf("%d reads of a cached note sent %d Redis commands, want at most %d (batched)", reads, n, reads/10)
	}
	t.Logf("%d cached reads: %d SQL statements, %d Redis commands", reads, queries.Load(), commands.Load())
}

func TestChangesReachTheOtherProcessWithinASecond(t *testing.T) {
	b := testkit.PostgresBackend(t)
	clock := testkit.NewClock()
	one, other := start(t, b, testkit.WithClock(clock)), start(t, b, testkit.WithClock(clock))
	awaitTrust(t, one)
	awaitTrust(t, other)
	acc := one.NewAccount(t, "owner")
	received := metric(t, other, "sharenote_changefeed_received_total")
	id := publishJSON(t, one, acc.Token, map[string]any{"content": "first"})
	// The publish's own event (a cuid may be cached as unknown) drops what the other
	// process loads before it arrives: let it arrive first.
	for wait := time.Now().Add(10 * time.Second); metric(t, other, "sharenote_changefeed_received_total") == received; {
		if time.Now().After(wait) {
			t.Fatal("the publish's event never reached the other process")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c, _ := content(t, other, id); c != "first" {
		t.Fatalf("content = %q", c)
	}
	assertServedFromCache(t, other, id) // The entry is trusted beyond a second.

	t.Run("PATCH", func(t *testing.T) {
		start := time.Now()
		one.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: acc.Token, JSON: map[string]any{"content": "second"}}).Expect(t, 200, "")
		within(t, start, time.Second, "PATCH on the other process", func() bool { c, _ := content(t, other, id); return c == "second" })
	})
	t.Run("settings", func(t *testing.T) {
		page := func() string { return string(other.Do(t, testkit.Request{Method: "GET", Path: "/s/" + id}).Body) }
		if !strings.Contains(page(), "color-scheme:light dark") {
			t.Fatal("the page does not follow the system theme before the change")
		}
		start := time.Now()
		one.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: acc.Token, JSON: map[string]any{"theme": "dark"}}).Expect(t, 200, "")
		within(t, start, time.Second, "settings in the JSON", func() bool { _, theme := content(t, other, id); return theme == "dark" })
		within(t, start, time.Second, "settings on the page", func() bool { return strings.Contains(page(), "color-scheme:dark}") })
	})
	t.Run("unshare", func(t *testing.T) {
		gone := publishJSON(t, one, acc.Token, map[string]any{"content": "soon gone"})
		content(t, other, gone)
		start := time.Now()
		one.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]any{"cuid": gone}}).Expect(t, 200, "")
		within(t, start, time.Second, "unshare on the other process", func() bool { c, _ := content(t, other, gone); return c == "" })
	})
	t.Run("expiry", func(t *testing.T) {
		expires := clock.Now().Add(time.Minute).Truncate(time.Millisecond)
		id := publishJSON(t, one, acc.Token, map[string]any{"content": "brief", "expires_at": expires.Format(time.RFC3339Nano)})
		for _, s := range []*testkit.Server{one, other} {
			if c, _ := content(t, s, id); c != "brief" {
				t.Fatalf("content = %q before expiry", c)
			}
		}
		clock.Advance(time.Minute) // Both processes' clock reaches expires_at now.
		start := time.Now()
		for _, s := range []*testkit.Server{one, other} {
			within(t, start, time.Second, "expiry", func() bool { c, _ := content(t, s, id); return c == "" })
		}
	})
	t.Run("license deactivation", func(t *testing.T) {
		other.Do(t, testkit.Request{Method: "GET", Path: "/api/user/settings", Token: acc.Token}).Expect(t, 200, "")
		start := time.Now()
		if err := one.App.Deps().Accounts.Deactivate(context.Background(), acc.LicenseKey); err != nil {
			t.Fatal(err)
		}
		within(t, start, time.Second, "revocation on the other process", func() bool {
			return other.Do(t, testkit.Request{Method: "GET", Path: "/api/user/settings", Token: acc.Token}).Status == http.StatusUnauthorized
		})
		if c, _ := content(t, other, id); c != "second" {
			t.Errorf("deactivation unpublished the note: content %q", c)
		}
	})
}

func TestLostSubscriptionServesEntriesAtMostASecondOldWithoutAStampede(t *testing.T) {
	redis := testkit.StartRedis(t)
	b := testkit.Backend{Name: "postgres", DatabaseURL: testkit.NewPostgresDB(t), RedisURL: redis.URL, RedisPrefix: "lost:"}
	one, other := start(t, b), start(t, b)
	awaitTrust(t, other)
	acc := one.NewAccount(t, "owner")
	id := publishJSON(t, one, acc.Token, map[string]any{"content": "first"})
	content(t, other, id)

	redis.Stop()
	within(t, time.Now(), time.Second, "noticing the lost subscription", func() bool {
		return metric(t, other, "sharenote_changefeed_subscribed") == 0
	})
	one.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: acc.Token, JSON: map[string]any{"content": "second"}}).Expect(t, 200, "")
	sent := metric(t, one, "sharenote_changefeed_events_sent_total")
	start := time.Now() // The change is committed before the answer.
	within(t, start, time.Second, "PATCH without the feed", func() bool { c, _ := content(t, other, id); return c == "second" })

	// However many readers ask, a note is reloaded at most once at a time: here, once
	// per second.
	queries := testkit.CountQueries(t, other.App.DB())
	loads := metric(t, other, "sharenote_readcache_loads_total")
	began := time.Now()
	for range 5 {
		getAtOnce(t, other.URL+"/api/notes/"+id, 32)
		time.Sleep(500 * time.Millisecond)
	}
	maxLoads := float64(time.Since(began)/time.Second) + 1
	if n := metric(t, other, "sharenote_readcache_loads_total") - loads; n > maxLoads {
		t.Errorf("160 reads in %v reloaded the note %v times, want at most %v (once a second)", time.Since(began).Round(time.Millisecond), n, maxLoads)
	}
	if n := queries.Load(); float64(n) > maxLoads {
		t.Errorf("160 reads ran %d SQL statements, want at most %v", n, maxLoads)
	}

	redis.Start()
	awaitTrust(t, other)
	// The change that could not be published during the outage is kept and sent after
	// it. (Whether the other process hears it depends on which of the two reconnects
	// first, which pub/sub does not promise; until it has resubscribed it trusted nothing
	// older than a second anyway.)
	within(t, time.Now(), 5*time.Second, "the change kept back during the outage", func() bool {
		return metric(t, one, "sharenote_changefeed_events_sent_total") > sent
	})
	// Entries loaded before the resubscription are trusted for a second more; the one
	// loaded after it is trusted for good.
	time.Sleep(time.Second)
	content(t, other, id)
	assertServedFromCache(t, other, id)
}

func TestEmbeddedDefaultRechecksWhatOtherProcessesChanged(t *testing.T) {
	b := testkit.SQLiteBackend(t)
	s, second := start(t, b), start(t, b)
	acc := s.NewAccount(t, "owner")
	id := publishJSON(t, s, acc.Token, map[string]any{"content": "first"})
	content(t, s, id)
	s.Do(t, testkit.Request{Method: "GET", Path: "/api/user/settings", Token: acc.Token}).Expect(t, 200, "")

	start := time.Now()
	second.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: acc.Token, JSON: map[string]any{"content": "second"}}).Expect(t, 200, "")
	within(t, start, 1100*time.Millisecond, "a PATCH by another process", func() bool { c, _ := content(t, s, id); return c == "second" })

	// The operator's command is another process without Redis: the server re-checks the
	// sessions it remembers every second.
	env := map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL}
	var stdout, stderr bytes.Buffer
	start = time.Now()
	err := auth.LicensesCommand.Run(context.Background(), cli.Env{Getenv: func(k string) string { return env[k] }, Stdout: &stdout, Stderr: &stderr},
		[]string{"deactivate", "--license", acc.LicenseKey})
	if err != nil {
		t.Fatalf("deactivate: %v: %s", err, stderr.String())
	}
	var out struct{ Status string }
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || out.Status != "deactivated" {
		t.Fatalf("deactivate printed %q", stdout.String())
	}
	within(t, start, 1100*time.Millisecond, "the CLI's deactivation", func() bool {
		return s.Do(t, testkit.Request{Method: "GET", Path: "/api/user/settings", Token: acc.Token}).Status == http.StatusUnauthorized
	})
}

// A note whose JSON is too large to cache as it is (1.8 MB of "<", each escaped to six
// bytes: 10.8 MB of JSON) is kept compressed and served from the cache, to the clients
// that take gzip and to those that take no compression.
func TestALargeNoteIsServedFromTheCache(t *testing.T) {
	b := testkit.Backend{Name: "postgres", DatabaseURL: testkit.NewPostgresDB(t), RedisURL: testkit.RedisURL(t), RedisPrefix: testkit.NewRedisPrefix(t)}
	s := start(t, b)
	acc := s.NewAccount(t, "large")
	const size = 1_800_000
	var created struct{ CUID string }
	s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token, Body: []byte(strings.Repeat("<", size)), ContentType: "text/markdown"}).
		Expect(t, http.StatusOK, "").Decode(t, &created)
	awaitTrust(t, s)
	excused := func() float64 {
		return metric(t, s, "sharenote_changefeed_lapses_total") + metric(t, s, "sharenote_changefeed_subscriptions_total")
	}
	loads, excuses := metric(t, s, "sharenote_readcache_loads_total"), excused()
	identity := map[string]string{"Accept-Encoding": "identity"}
	for i, header := range []map[string]string{identity, nil, identity, nil, identity} {
		resp := s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + created.CUID, Header: header}).Expect(t, http.StatusOK, "")
		var n struct{ Content string }
		resp.Decode(t, &n)
		if len(n.Content) != size || strings.Trim(n.Content, "<") != "" || resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("read %d: %d bytes of content, encoding %q", i, len(n.Content), resp.Header.Get("Content-Encoding"))
		}
	}
	if n := metric(t, s, "sharenote_readcache_loads_total") - loads; n > 1+excused()-excuses {
		t.Errorf("5 reads of a large note loaded it %v times, want once", n)
	}
}
