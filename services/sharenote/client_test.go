package sharenote_test

// The tests of libs/client and of its commands (libs/client/clientcmd) against the real
// program live here, in the client*_test.go files: libs never imports the targets, and a
// server without them would be a mock of the API.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/wire"
)

func apiError(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) || e.Status != status || e.Code != code || e.Message == "" {
		t.Fatalf("error %v, want *client.Error %d %s with a message", err, status, code)
	}
	return e
}

func TestClientCallsEveryOperation(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		if _, err := (&client.Client{BaseURL: f.URL}).Login(ctx, f.acc.LicenseKey, "not-an-instance"); err != nil {
			apiError(t, err, http.StatusUnauthorized, "unauthorized")
		} else {
			t.Fatal("login with a wrong instance succeeded")
		}
		tok, err := (&client.Client{BaseURL: f.URL}).Login(ctx, f.acc.LicenseKey, f.acc.InstanceID)
		if err != nil || tok.UserCuid != f.acc.UserCUID || tok.User.Name != "owner" || time.Until(tok.ExpiresAt.Time) < time.Hour {
			t.Fatalf("login = %+v, %v", tok, err)
		}
		c := &client.Client{BaseURL: f.URL, Token: tok.Token}
		cuids := []string{f.publish("One"), f.publish("Two"), f.publish("Three")}

		pub, err := c.Note(ctx, cuids[0])
		if err != nil || pub.Title == nil || *pub.Title != "One" || pub.Appearance.Theme != "system" {
			t.Fatalf("note = %+v, %v", pub, err)
		}
		owner, err := c.Update(ctx, cuids[0], wire.NoteUpdate{Title: wire.Clear[string](), Properties: wire.Set(wire.Properties{"n": 1})}, "")
		if err != nil || owner.Title != nil || owner.ETag == "" || owner.Properties["n"] == nil {
			t.Fatalf("update = %+v, %v", owner, err)
		}
		stale := owner.ETag
		content := "# One, again"
		if owner, err = c.Update(ctx, cuids[0], wire.NoteUpdate{Content: &content}, owner.ETag); err != nil || owner.ETag == stale {
			t.Fatalf("update with If-Match = %+v, %v", owner, err)
		}
		_, err = c.Update(ctx, cuids[0], wire.NoteUpdate{Content: &content}, stale)
		apiError(t, err, http.StatusPreconditionFailed, "precondition_failed")

		vs, err := c.Versions(ctx, cuids[0])
		if err != nil || len(vs.Versions) != 2 || vs.Versions[0].Version != 2 {
			t.Fatalf("versions = %+v, %v", vs, err)
		}
		v, err := c.Version(ctx, cuids[0], 1)
		if err != nil || v.Title == nil || *v.Title != "One" || v.Content != "# One" {
			t.Fatalf("version 1 = %+v, %v", v, err)
		}
		_, err = c.Version(ctx, cuids[0], 9)
		apiError(t, err, http.StatusNotFound, "not_found")

		var seen []string
		for page, err := range c.Pages(ctx, 1) {
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range page.Notes {
				seen = append(seen, n.Cuid)
			}
		}
		if len(seen) != 3 {
			t.Errorf("pages of 1 gave %v, want the 3 notes", seen)
		}

		dark, mono := "dark", "mono"
		p, err := c.UpdateSettings(ctx, wire.SettingsInput{Theme: &dark})
		if err != nil || p.Settings.Theme != "dark" || p.Settings.Name != "owner" {
			t.Fatalf("update settings = %+v, %v", p, err)
		}
		if p, err = c.ReplaceSettings(ctx, wire.SettingsInput{Font: &mono}); err != nil || p.Settings.Theme != "system" || p.Settings.Font != "mono" {
			t.Fatalf("replace settings = %+v, %v", p, err)
		}
		if p, err = c.Settings(ctx); err != nil || p.Settings.Font != "mono" || p.Storage.ImageLimitBytes != 1_000_000_000 {
			t.Fatalf("settings = %+v, %v", p, err)
		}

		if u, err := c.Unshare(ctx, cuids[1]); err != nil || u.Status != "unpublished" {
			t.Fatalf("unshare = %+v, %v", u, err)
		}
		_, err = c.Note(ctx, cuids[1])
		apiError(t, err, http.StatusNotFound, "not_found")
	})
}

// proxy is a reverse proxy in front of a server that counts the requests it passes on,
// by method and path.
type proxy struct {
	URL string
	mu  sync.Mutex
	n   map[string]int
}

// startProxy starts a proxy to the fixture's server. The server's clock stands still
// unless a test moves it, so the proxy moves it by the Retry-After of every 429 it passes
// back: the time the client waits really passes for the limiter too.
func startProxy(t *testing.T, f *fixture) *proxy {
	u, err := url.Parse(f.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{n: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.StatusCode == http.StatusTooManyRequests {
			p.mu.Lock()
			p.n["429"]++
			p.mu.Unlock()
		}
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && resp.StatusCode == http.StatusTooManyRequests {
			f.Clock.Advance(time.Duration(secs) * time.Second)
		}
		return nil
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.n[r.Method+" "+r.URL.Path]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	p.URL = s.URL
	return p
}

func (p *proxy) count(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[key]
}

func TestRateLimitedGETIsWaitedOutAndRetried(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	p := startProxy(t, f)
	c := &client.Client{BaseURL: p.URL, Token: f.acc.Token}
	// Spend the all-API limit (a burst of 600 per IP); the server's clock stands still, so
	// it stays spent until the proxy passes a 429 on.
	spent := false
	for range 1000 {
		resp := f.Do(t, testkit.Request{Method: http.MethodGet, Path: "/api/none"})
		if spent = resp.Status == http.StatusTooManyRequests; spent {
			break
		}
	}
	if !spent {
		t.Fatal("the all-API limit never answered 429")
	}
	start := time.Now()
	if _, err := c.Settings(context.Background()); err != nil {
		t.Fatalf("settings after the limit: %v; want it waited out", err)
	}
	if sent := p.count("GET /api/user/settings"); sent != 2 {
		t.Errorf("the GET was sent %d times, want twice (refused, then retried)", sent)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %v, want Retry-After (at least 1 s)", waited)
	}
}

func TestRateLimitedMutationIsReportedNotRetried(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	p := startProxy(t, f)
	c := &client.Client{BaseURL: p.URL, Token: f.acc.Token}
	cuid := f.publish("Limited")
	content := "# changed"
	// 60 mutations a minute per account, and the server's clock stands still: the 61st is
	// refused.
	for i := range 100 {
		before := p.count("PATCH /api/notes/" + cuid)
		start := time.Now()
		_, err := c.Update(context.Background(), cuid, wire.NoteUpdate{Content: &content}, "")
		if err == nil {
			continue
		}
		e := apiError(t, err, http.StatusTooManyRequests, "rate_limited")
		if e.RetryAfter < time.Second {
			t.Errorf("RetryAfter = %v, want the header's whole seconds", e.RetryAfter)
		}
		if sent := p.count("PATCH /api/notes/"+cuid) - before; sent != 1 {
			t.Errorf("the refused PATCH was sent %d times, want once", sent)
		}
		if took := time.Since(start); took >= time.Second {
			t.Errorf("the refused PATCH took %v: it waited", took)
		}
		if i != 60 {
			t.Errorf("refused after %d updates, want 60 allowed", i)
		}
		return
	}
	t.Fatal("100 updates were all allowed")
}

// TestClientBudgetReadsTheServersHeaders: the service's own RateLimit-* headers reach a
// Client's Budget.
func TestClientBudgetReadsTheServersHeaders(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	budget := &client.Budget{}
	c := &client.Client{BaseURL: f.URL, Token: f.acc.Token, Budget: budget}
	if _, err := c.Publish(context.Background(), wire.PublishRequest{Content: "# Paced"}, nil); err != nil {
		t.Fatal(err)
	}
	if rl, ok := budget.Last(); !ok || rl.Limit != 60 || rl.Remaining != 59 || budget.Delay() != 0 {
		t.Errorf("Last = %+v, %v, Delay %v; want 60 with 59 remaining, no wait", rl, ok, budget.Delay())
	}
}

// budgetProxy stands in front of a server as its mutation limiter: a budget of n
// mutations that is full again window after the first, told in the RateLimit-* headers
// of every answer to a mutation; a mutation over it is a 429 with Retry-After. refuseNth
// makes the nth mutation a 429 whatever the budget. It counts what passes and what not.
type budgetProxy struct {
	URL       string
	mu        sync.Mutex
	n         int
	window    time.Duration
	used      int
	start     time.Time
	refuseNth int
	seen      int
	passed    int
	refused   int
}

func startBudgetProxy(t *testing.T, target string, n int, window time.Duration) *budgetProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	b := &budgetProxy{n: n, window: window}
	rp := httputil.NewSingleHostReverseProxy(u)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.URL.Path == "/api/auth/publish" {
			rp.ServeHTTP(w, r)
			return
		}
		if !b.admit(w) {
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	b.URL = s.URL
	return b
}

// admit takes a mutation from the budget and sets the headers; false when it refused it.
func (b *budgetProxy) admit(w http.ResponseWriter) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.used == 0 || now.Sub(b.start) >= b.window {
		b.used, b.start = 0, now
	}
	b.seen++
	reset := int((b.window - now.Sub(b.start) + time.Second - 1) / time.Second)
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(b.n))
	h.Set("RateLimit-Reset", strconv.Itoa(reset))
	if b.used == b.n || b.seen == b.refuseNth {
		b.refused++
		h.Set("RateLimit-Remaining", strconv.Itoa(b.n-b.used))
		h.Set("Retry-After", strconv.Itoa(max(reset, 1)))
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":"rate_limited","message":"Too many requests."}`))
		return false
	}
	b.used++
	b.passed++
	h.Set("RateLimit-Remaining", strconv.Itoa(b.n-b.used))
	return true
}

func (b *budgetProxy) counts() (passed, refused int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.passed, b.refused
}

// TestClientPacesAFolderByTheRateLimitHeaders: a folder of more notes than the budget
// holds is published without one 429, by waiting for the budget's reset; a 429 that comes
// all the same fails its note alone ("rate limited, retry in N s"), is never sent again,
// the next note waits out its Retry-After, and the same command run again sends only
// the note that is missing.
func TestClientPacesAFolderByTheRateLimitHeaders(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	b := startBudgetProxy(t, f.URL, 4, time.Second)
	f.env["SHARE_SERVER"] = b.URL
	dir := t.TempDir()
	notes := map[string][]byte{}
	for i := range 10 {
		notes[fmt.Sprintf("n%02d.md", i)] = []byte(fmt.Sprintf("# Note %d\n", i))
	}
	write(t, dir, notes)
	start := time.Now()
	code, lines, errOut := f.publishVault(dir)
	if passed, refused := b.counts(); code != 0 || len(lines) != 10 || passed != 10 || refused != 0 {
		t.Errorf("exit %d, %d notes, %d mutations passed, %d refused; want 10 published without a 429; stderr %q", code, len(lines), passed, refused, errOut)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("10 publishes within a budget of 4 a second took %v, want the waits for the resets", took)
	}

	for i := range 10 {
		notes[fmt.Sprintf("n%02d.md", i)] = []byte(fmt.Sprintf("# Note %d, changed\n", i))
	}
	write(t, dir, notes)
	b.mu.Lock()
	b.refuseNth, b.used = b.seen+3, 0
	b.mu.Unlock()
	code, lines, errOut = f.publishVault(dir)
	if code != 1 || len(lines) != 9 || !strings.Contains(errOut, "failed: n02.md: rate limited, retry in ") ||
		!strings.Contains(errOut, "updated 9, unchanged 0, failed 1") {
		t.Errorf("a 429: exit %d, %d notes; want 1 and the one note failed; stderr %q", code, len(lines), errOut)
	}
	_, refused := b.counts()
	code, lines, errOut = f.publishVault(dir)
	if passed, again := b.counts(); code != 0 || again != refused || lines["n02.md"].what != "updated" || !strings.Contains(errOut, "updated 1, unchanged 9, failed 0") {
		t.Errorf("run again: exit %d, %d passed, %+v; want the missing note alone updated; stderr %q", code, passed, lines["n02.md"], errOut)
	}
}
