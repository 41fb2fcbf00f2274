package changefeed_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/redisx"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// running is a feed that runs until the test ends, and the events it hands its handlers.
type running struct {
	*changefeed.Feed
	reg    *prometheus.Registry
	mu     sync.Mutex
	events []changefeed.Event
}

func run(t *testing.T, url, prefix string) *running {
	t.Helper()
	var rdb *redis.Client
	if url != "" {
		var err error
		if rdb, err = redisx.Open(url); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rdb.Close() })
	}
	reg := prometheus.NewRegistry()
	r := &running{Feed: changefeed.New(rdb, prefix, slog.New(slog.NewTextHandler(io.Discard, nil)), reg), reg: reg}
	r.OnChange(func(e changefeed.Event) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, e)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func (r *running) got(e changefeed.Event) bool { return r.count(e) > 0 }

func (r *running) count(e changefeed.Event) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.events {
		if x == e {
			n++
		}
	}
	return n
}

func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEventsReachEveryProcess(t *testing.T) {
	url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
	a, b := run(t, url, prefix), run(t, url, prefix)
	eventually(t, 2*time.Second, "both subscribed", func() bool { return a.Trusts(time.Now()) && b.Trusts(time.Now()) })
	for _, e := range []changefeed.Event{{Kind: changefeed.Note, ID: "n1"}, {Kind: changefeed.Account, ID: "a1"}, {Kind: changefeed.Sessions, ID: "a1"}} {
		a.Publish(e)
		if !a.got(e) {
			t.Errorf("%v: not delivered in the publishing process before Publish returned", e)
		}
		eventually(t, 500*time.Millisecond, "delivery to the other process", func() bool { return b.got(e) })
	}
	time.Sleep(100 * time.Millisecond)
	if n := a.count(changefeed.Event{Kind: changefeed.Note, ID: "n1"}); n != 1 {
		t.Errorf("the publishing process handled its own event %d times, want once (no echo)", n)
	}
	other := run(t, url, "someone-else:")
	a.Publish(changefeed.Event{Kind: changefeed.Note, ID: "n2"})
	time.Sleep(100 * time.Millisecond)
	if other.got(changefeed.Event{Kind: changefeed.Note, ID: "n2"}) {
		t.Error("an installation with another prefix heard the event")
	}
}

func TestTrustFollowsTheSubscription(t *testing.T) {
	redis := testkit.StartRedis(t)
	f := run(t, redis.URL, "trust:")
	before := time.Now().Add(-time.Millisecond)
	eventually(t, 2*time.Second, "subscribed", func() bool { return f.Trusts(time.Now()) })
	if f.Trusts(before) {
		t.Error("an entry loaded before the subscription was trusted")
	}
	loaded := time.Now()
	redis.Stop()
	eventually(t, time.Second, "distrust after Redis stopped", func() bool { return !f.Trusts(loaded) })
	if f.Fresh(time.Now().Add(-2 * changefeed.MaxUntrustedAge)) {
		t.Error("an old entry is fresh while the subscription is lost")
	}
	if !f.Fresh(time.Now()) {
		t.Error("a new entry is not fresh while the subscription is lost")
	}
	redis.Start()
	eventually(t, 3*time.Second, "trust after Redis is back", func() bool { return f.Trusts(time.Now()) })
	if f.Trusts(loaded) {
		t.Error("an entry loaded before the outage is trusted after it")
	}
}

func TestAStalledSubscriptionIsALapseNotALoss(t *testing.T) {
	redis := testkit.StartRedis(t)
	f := run(t, redis.URL, "lapse:")
	eventually(t, 2*time.Second, "subscribed", func() bool { return f.Trusts(time.Now()) })
	loaded := time.Now()
	rdb, err := redisx.Open(redis.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	// CLIENT PAUSE holds every client's commands, the feed's pings among them, for longer
	// than the confirm window: the subscription lives but cannot show it.
	if err := rdb.Do(context.Background(), "CLIENT", "PAUSE", "1500").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 1500*time.Millisecond, "distrust while the pongs are held", func() bool { return !f.Trusts(loaded) })
	eventually(t, 3*time.Second, "trust again once a pong arrives", func() bool { return f.Trusts(loaded) })
	if n := testkit.Metric(t, f.reg, "sharenote_changefeed_lapses_total"); n != 1 {
		t.Errorf("lapses counted %v, want 1", n)
	}
	if n := testkit.Metric(t, f.reg, "sharenote_changefeed_subscriptions_total"); n != 1 {
		t.Errorf("subscriptions %v, want 1: a lapse is not a lost subscription", n)
	}
}

func TestWithoutRedisNothingIsTrustedForMoreThanASecond(t *testing.T) {
	f := run(t, "", "")
	e := changefeed.Event{Kind: changefeed.Note, ID: "n"}
	f.Publish(e)
	if !f.got(e) {
		t.Error("an event was not delivered in its own process")
	}
	if f.Trusts(time.Now()) || f.Fresh(time.Now().Add(-changefeed.MaxUntrustedAge)) || !f.Fresh(time.Now()) {
		t.Error("without Redis, entries must be fresh for a second and no longer")
	}
}
