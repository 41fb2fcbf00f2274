package client

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RateLimit is the account's budget of mutations as a response's RateLimit-Limit,
// RateLimit-Remaining and RateLimit-Reset headers told it (docs/api.md "Rate limits").
type RateLimit struct {
	Limit, Remaining int
	// Reset is when the budget is full again.
	Reset time.Time
}

// Budget paces the mutations of the Clients that share it (Client.Budget): it remembers
// the RateLimit-* headers of the last answer to a mutation, and the Retry-After of a 429,
// and a mutation sent through the Client first waits while the budget is spent, so that
// a program publishing hundreds of notes meets no 429 instead of meeting and reporting
// it. It never sends anything again: a mutation refused all the same is the caller's to
// report. The zero Budget knows nothing yet and waits for nothing; it is safe for
// concurrent use.
type Budget struct {
	mu        sync.Mutex
	last      RateLimit
	known     bool
	notBefore time.Time
}

// Last returns the budget the last answer to a mutation told, and false when no answer
// carried the headers (the server's limiter was failing open, or nothing was sent yet).
func (b *Budget) Last() (RateLimit, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last, b.known
}

// Delay is how long a mutation sent now would wait: until the budget's reset when the last
// answer said none remained, or until the Retry-After of a 429 has passed; zero when
// neither holds.
func (b *Budget) Delay() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	until := b.notBefore
	if b.known && b.last.Remaining <= 0 && b.last.Reset.After(until) {
		until = b.last.Reset
	}
	return max(time.Until(until), 0)
}

// wait sleeps for Delay, or until ctx ends.
func (b *Budget) wait(ctx context.Context) error {
	d := b.Delay()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// observe takes the budget from an answer to a mutation: its RateLimit-* headers, and the
// Retry-After of a 429 (after which the budget is not known to be spent, but the server
// said when to come back).
func (b *Budget) observe(resp *http.Response) {
	now := time.Now()
	limit, err1 := strconv.Atoi(resp.Header.Get("RateLimit-Limit"))
	remaining, err2 := strconv.Atoi(resp.Header.Get("RateLimit-Remaining"))
	reset, err3 := strconv.Atoi(resp.Header.Get("RateLimit-Reset"))
	b.mu.Lock()
	defer b.mu.Unlock()
	if err1 == nil && err2 == nil && err3 == nil && reset >= 0 {
		b.last = RateLimit{Limit: limit, Remaining: remaining, Reset: now.Add(time.Duration(reset) * time.Second)}
		b.known = true
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			b.notBefore = now.Add(time.Duration(secs) * time.Second)
		}
	}
}

// paced reports whether a request is one of the account's mutations, which the budget
// counts: every method but GET, except the login (which has no account yet).
func paced(method, path string) bool {
	return method != http.MethodGet && method != http.MethodHead && path != loginPath
}
