package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/wire"
)

// limiter is a server of updates with a budget of n mutations that refills whole, window
// after the first of them, and says so in the RateLimit-* headers; a mutation over the
// budget is a 429 with Retry-After, as the service answers.
type limiter struct {
	mu       sync.Mutex
	n        int
	window   time.Duration
	used     int
	start    time.Time
	accepted int
	refused  int
}

func (l *limiter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.used == 0 || now.Sub(l.start) >= l.window {
		l.used, l.start = 0, now
	}
	reset := int((l.window - now.Sub(l.start) + time.Second - 1) / time.Second)
	w.Header().Set("RateLimit-Limit", strconv.Itoa(l.n))
	w.Header().Set("Content-Type", "application/json")
	if l.used == l.n {
		l.refused++
		w.Header().Set("RateLimit-Remaining", "0")
		w.Header().Set("RateLimit-Reset", strconv.Itoa(reset))
		w.Header().Set("Retry-After", strconv.Itoa(max(reset, 1)))
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":"rate_limited","message":"Too many requests."}`))
		return
	}
	l.used++
	l.accepted++
	w.Header().Set("RateLimit-Remaining", strconv.Itoa(l.n-l.used))
	w.Header().Set("RateLimit-Reset", strconv.Itoa(reset))
	_, _ = w.Write([]byte(`{"cuid":"c","url":"u","etag":"e","warnings":[]}`))
}

func TestABudgetPacesMutationsSoThatNoneIsRefused(t *testing.T) {
	l := &limiter{n: 3, window: time.Second}
	srv := httptest.NewServer(l)
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, Token: "t", Budget: &client.Budget{}}
	content := "x"
	start := time.Now()
	for i := range 7 {
		if _, err := c.Update(context.Background(), "c", wire.NoteUpdate{Content: &content}, ""); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	if l.refused != 0 || l.accepted != 7 {
		t.Errorf("accepted %d, refused %d; want 7 and none", l.accepted, l.refused)
	}
	// 3, then a wait for the reset, 3, a wait, 1.
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("7 updates within a budget of 3 a second took %v, want at least 2 s", took)
	}
	if rl, ok := c.Budget.Last(); !ok || rl.Limit != 3 || rl.Remaining != 2 {
		t.Errorf("Last = %+v, %v; want the last answer's limit 3 and remaining 2", rl, ok)
	}
}

func TestWithoutABudgetA429IsReportedAndTheNextMutationWaitsWithOne(t *testing.T) {
	l := &limiter{n: 1, window: time.Second}
	srv := httptest.NewServer(l)
	defer srv.Close()
	content := "x"
	bare := &client.Client{BaseURL: srv.URL, Token: "t"}
	for range 2 {
		_, _ = bare.Update(context.Background(), "c", wire.NoteUpdate{Content: &content}, "")
	}
	if l.refused != 1 {
		t.Fatalf("refused %d, want the second update refused without a budget", l.refused)
	}
	// A budget that saw the 429 waits out its Retry-After before the next mutation,
	// and never sends the refused one again.
	b := &client.Budget{}
	paced := &client.Client{BaseURL: srv.URL, Token: "t", Budget: b}
	_, err := paced.Update(context.Background(), "c", wire.NoteUpdate{Content: &content}, "")
	if err == nil {
		t.Fatal("the update within the spent window was accepted")
	}
	if b.Delay() <= 0 {
		t.Errorf("after a 429, Delay = %v, want the Retry-After", b.Delay())
	}
	if _, err := paced.Update(context.Background(), "c", wire.NoteUpdate{Content: &content}, ""); err != nil {
		t.Errorf("the next update: %v, want it to wait and pass", err)
	}
	if l.refused != 2 || l.accepted != 2 {
		t.Errorf("accepted %d, refused %d; want 2 and 2 (nothing sent again)", l.accepted, l.refused)
	}
}

func TestReadsAreNotPaced(t *testing.T) {
	b := &client.Budget{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Limit", "60")
		w.Header().Set("RateLimit-Remaining", "0")
		w.Header().Set("RateLimit-Reset", "60")
		_, _ = w.Write([]byte(`{"notes":[],"next_cursor":null}`))
	}))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, Token: "t", Budget: b}
	for range 2 {
		if _, err := c.List(context.Background(), client.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := b.Last(); ok || b.Delay() != 0 {
		t.Errorf("a GET's headers were taken as the mutation budget")
	}
}

// TestAGETWhoseConnectionDropsIsSentAgainAndAMutationNever: a connection closed before
// the answer is transient for a read, which is sent again; a change is not, as it may
// have been made.
func TestAGETWhoseConnectionDropsIsSentAgainAndAMutationNever(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method]++
		first := seen[r.Method] == 1
		mu.Unlock()
		if first {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		_, _ = w.Write([]byte(`{"notes":[],"next_cursor":null}`))
	}))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, Token: "t"}
	if _, err := c.List(context.Background(), client.ListOptions{}); err != nil {
		t.Errorf("list after a dropped connection: %v, want it sent again", err)
	}
	content := "x"
	if _, err := c.Update(context.Background(), "c", wire.NoteUpdate{Content: &content}, ""); err == nil {
		t.Error("the dropped update succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[http.MethodGet] != 2 || seen[http.MethodPatch] != 1 {
		t.Errorf("sent %v; want the GET twice and the PATCH once", seen)
	}
}
