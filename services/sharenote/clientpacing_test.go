package sharenote_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/wire"
)

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
	code, lines, errOut = f.publishVault(filepath.Join(dir))
	if passed, again := b.counts(); code != 0 || again != refused || lines["n02.md"].what != "updated" || !strings.Contains(errOut, "updated 1, unchanged 9, failed 0") {
		t.Errorf("run again: exit %d, %d passed, %+v; want the missing note alone updated; stderr %q", code, passed, lines["n02.md"], errOut)
	}
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
