package changefeed_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	neturl "net/url"
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
	events map[changefeed.Event]int
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
	r := feed(rdb, prefix)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// feed is a feed over rdb that records its events and is not running.
func feed(rdb *redis.Client, prefix string) *running {
	reg := prometheus.NewRegistry()
	r := &running{Feed: changefeed.New(rdb, prefix, slog.New(slog.NewTextHandler(io.Discard, nil)), reg), reg: reg,
		events: map[changefeed.Event]int{}}
	r.OnChange(func(e changefeed.Event) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events[e]++
	})
	return r
}

func (r *running) got(e changefeed.Event) bool { return r.count(e) > 0 }

func (r *running) count(e changefeed.Event) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events[e]
}

// kinds counts the distinct events of kind k received.
func (r *running) kinds(k changefeed.Kind) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for e := range r.events {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func TestEventsReachEveryProcess(t *testing.T) {
	url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
	a, b := run(t, url, prefix), run(t, url, prefix)
	testkit.Eventually(t, 2*time.Second, "both subscribed", func() bool { return a.Trusts(time.Now()) && b.Trusts(time.Now()) })
	for _, e := range []changefeed.Event{{Kind: changefeed.Note, ID: "n1"}, {Kind: changefeed.Account, ID: "a1"}, {Kind: changefeed.Sessions, ID: "a1"}} {
		a.Publish(e)
		if !a.got(e) {
			t.Errorf("%v: not delivered in the publishing process before Publish returned", e)
		}
		testkit.Eventually(t, 500*time.Millisecond, "delivery to the other process", func() bool { return b.got(e) })
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
	testkit.Eventually(t, 2*time.Second, "subscribed", func() bool { return f.Trusts(time.Now()) })
	if f.Trusts(before) {
		t.Error("an entry loaded before the subscription was trusted")
	}
	loaded := time.Now()
	redis.Stop()
	testkit.Eventually(t, time.Second, "distrust after Redis stopped", func() bool { return !f.Trusts(loaded) })
	if f.Fresh(time.Now().Add(-2 * changefeed.MaxUntrustedAge)) {
		t.Error("an old entry is fresh while the subscription is lost")
	}
	if !f.Fresh(time.Now()) {
		t.Error("a new entry is not fresh while the subscription is lost")
	}
	redis.Start()
	testkit.Eventually(t, 3*time.Second, "trust after Redis is back", func() bool { return f.Trusts(time.Now()) })
	if f.Trusts(loaded) {
		t.Error("an entry loaded before the outage is trusted after it")
	}
}

func TestAStalledSubscriptionIsALapseNotALoss(t *testing.T) {
	redis := testkit.StartRedis(t)
	f := run(t, redis.URL, "lapse:")
	testkit.Eventually(t, 2*time.Second, "subscribed", func() bool { return f.Trusts(time.Now()) })
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
	testkit.Eventually(t, 1500*time.Millisecond, "distrust while the pongs are held", func() bool { return !f.Trusts(loaded) })
	testkit.Eventually(t, 3*time.Second, "trust again once a pong arrives", func() bool { return f.Trusts(loaded) })
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

// everything is the event that drops every cached read: what a sender sends when its
// pending events overflow their bound.
var everything = changefeed.Event{Kind: changefeed.Everything}

// slowRedis returns url with its host replaced by a loopback proxy that holds what the
// client sends for delay: Redis one delay away, as in another zone.
func slowRedis(t *testing.T, url string, delay time.Duration) string {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); conns.Wait() })
	target := u.Host
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				_ = client.Close()
				continue
			}
			type chunk struct {
				at   time.Time
				data []byte
			}
			chunks := make(chan chunk, 1024)
			conns.Go(func() {
				defer close(chunks)
				for {
					buf := make([]byte, 64<<10)
					n, err := client.Read(buf)
					if n > 0 {
						chunks <- chunk{time.Now(), buf[:n]}
					}
					if err != nil {
						return
					}
				}
			})
			conns.Go(func() {
				defer func() { _ = server.Close() }()
				for c := range chunks {
					time.Sleep(time.Until(c.at.Add(delay)))
					if _, err := server.Write(c.data); err != nil {
						return
					}
				}
			})
			conns.Go(func() {
				defer func() { _ = client.Close() }()
				_, _ = io.Copy(client, server)
			})
		}
	}()
	u.Host = ln.Addr().String()
	return u.String()
}

// A burst of changes (a note linked from 5,000 others) costs the sender a few round trips,
// reaches the other process whole, and does not hold back another account's change
// queued after it.
func TestABurstReachesTheOtherProcessWholeAndDelaysNoOneElse(t *testing.T) {
	url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
	a, b := run(t, slowRedis(t, url, time.Millisecond), prefix), run(t, url, prefix)
	testkit.Eventually(t, 2*time.Second, "both subscribed", func() bool { return a.Trusts(time.Now()) && b.Trusts(time.Now()) })
	const burst = 5000
	start := time.Now()
	for i := range burst {
		a.Publish(changefeed.Event{Kind: changefeed.Note, ID: fmt.Sprintf("burst%d", i)})
	}
	other := changefeed.Event{Kind: changefeed.Note, ID: "another-accounts-unshare"}
	a.Publish(other)
	testkit.Eventually(t, time.Second, "another account's change queued after the burst", func() bool { return b.got(other) })
	otherTook := time.Since(start)
	testkit.Eventually(t, time.Second, "every change of the burst (or one that drops everything)", func() bool {
		return b.kinds(changefeed.Note) == burst+1 || b.got(everything)
	})
	took := time.Since(start)
	messages := testkit.Metric(t, a.reg, "sharenote_changefeed_messages_sent_total")
	t.Logf("burst of %d changes through Redis 1 ms away, in %v messages: the other account's change arrived after %v, the whole burst after %v",
		burst, messages, otherTook.Round(time.Millisecond), took.Round(time.Millisecond))
	if messages < 1 || messages > 10 {
		t.Errorf("the burst took %v messages, want a few", messages)
	}
}

// publisher sends crafted messages on the feed's channel, as another process (or a lost
// message) would leave them.
func publisher(t *testing.T, url, prefix string) func(payload string) {
	t.Helper()
	rdb, err := redisx.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return func(payload string) {
		t.Helper()
		if err := rdb.Publish(context.Background(), prefix+"changes", payload).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAGapInASendersSequenceDistrustsTheCache(t *testing.T) {
	url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
	b := run(t, url, prefix)
	testkit.Eventually(t, 2*time.Second, "subscribed", func() bool { return b.Trusts(time.Now()) })
	send := publisher(t, url, prefix)
	loaded := time.Now()
	note := func(id string) changefeed.Event { return changefeed.Event{Kind: changefeed.Note, ID: id} }
	receive := func(payload string, e changefeed.Event) {
		t.Helper()
		send(payload)
		testkit.Eventually(t, time.Second, payload, func() bool { return b.got(e) })
	}

	receive("sender.1 n:one", note("one"))
	receive("sender.2 n:two a:acct", changefeed.Event{Kind: changefeed.Account, ID: "acct"})
	if !b.got(note("two")) {
		t.Error("the first event of a message of two was not delivered")
	}
	receive("newcomer.7 n:three", note("three"))
	if !b.Trusts(loaded) {
		t.Fatal("messages in sequence, or a new sender's first, made the feed distrust its cache")
	}

	receive("sender.4 n:four", note("four")) // sender.3 was lost.
	if b.Trusts(loaded) {
		t.Error("after a gap in a sender's sequence, an entry loaded before it is trusted")
	}
	if !b.Fresh(loaded) || b.Fresh(loaded.Add(-changefeed.MaxUntrustedAge)) {
		t.Error("after a gap, an entry loaded before it must be fresh for a second and no longer")
	}
	if !b.Trusts(time.Now()) {
		t.Error("an entry loaded after the gap is not trusted: the feed is consistent again")
	}
	after := time.Now()
	receive("sender.4 n:again", note("again")) // A message sent again (a retried PUBLISH) is no gap.
	receive("sender.5 n:five", note("five"))
	if !b.Trusts(after) {
		t.Error("a repeated message and the next in sequence made the feed distrust its cache")
	}
	if n := testkit.Metric(t, b.reg, "sharenote_changefeed_gaps_total"); n != 1 {
		t.Errorf("gaps counted %v, want 1", n)
	}
}

func TestMessagesItCannotCheckDistrustTheCache(t *testing.T) {
	url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
	b := run(t, url, prefix)
	testkit.Eventually(t, 2*time.Second, "subscribed", func() bool { return b.Trusts(time.Now()) })
	send := publisher(t, url, prefix)
	for _, c := range []struct{ name, payload string }{
		{"a message of the release before (no sequence number)", "oldsender n:old"},
		{"a message this release cannot read", "v9|oldsender|n:new"},
		{"an event of a kind this release does not know", "sender.1 n:known ?:unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			loaded := time.Now()
			testkit.Eventually(t, time.Second, "trust", func() bool { return b.Trusts(loaded) })
			send(c.payload)
			testkit.Eventually(t, time.Second, "distrust of entries loaded before", func() bool { return !b.Trusts(loaded) })
			if !b.Trusts(time.Now()) {
				t.Error("entries loaded after the message are not trusted")
			}
		})
	}
	if !b.got(changefeed.Event{Kind: changefeed.Note, ID: "old"}) || !b.got(changefeed.Event{Kind: changefeed.Note, ID: "known"}) {
		t.Error("the events it could read were not delivered")
	}
}

// While Redis holds writes, the sender's PUBLISH fails: it keeps the event, distrusts its
// own cache meanwhile, and sends the event once Redis takes writes again.
func TestASenderThatCannotPublishKeepsItsEventsAndDistrustsItsCache(t *testing.T) {
	redis := testkit.StartRedis(t)
	a, b := run(t, redis.URL, "unsent:"), run(t, redis.URL, "unsent:")
	testkit.Eventually(t, 2*time.Second, "both subscribed", func() bool { return a.Trusts(time.Now()) && b.Trusts(time.Now()) })
	rdb, err := redisx.Open(redis.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	loaded := time.Now()
	// CLIENT PAUSE WRITE holds PUBLISH but not the subscriptions' pings.
	if err := rdb.Do(context.Background(), "CLIENT", "PAUSE", "2000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	held := changefeed.Event{Kind: changefeed.Note, ID: "held"}
	a.Publish(held)
	testkit.Eventually(t, 1500*time.Millisecond, "the sender distrusts its cache while it cannot send", func() bool { return !a.Trusts(loaded) })
	testkit.Eventually(t, 3*time.Second, "the event reaches the other process once Redis takes writes", func() bool { return b.got(held) })
	testkit.Eventually(t, time.Second, "the sender trusts again once it has sent", func() bool { return a.Trusts(time.Now()) })
	if n := testkit.Metric(t, a.reg, "sharenote_changefeed_send_errors_total"); n < 1 {
		t.Errorf("send errors counted %v, want at least 1", n)
	}
}

// More distinct pending events than the bound holds become one event that drops
// everything: never a silent loss.
func TestAnOverflowingBacklogBecomesOneEventThatDropsEverything(t *testing.T) {
	redis := testkit.StartRedis(t)
	a, b := run(t, redis.URL, "overflow:"), run(t, redis.URL, "overflow:")
	testkit.Eventually(t, 2*time.Second, "both subscribed", func() bool { return a.Trusts(time.Now()) && b.Trusts(time.Now()) })
	rdb, err := redisx.Open(redis.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	if err := rdb.Do(context.Background(), "CLIENT", "PAUSE", "1000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	loaded := time.Now()
	for i := range 50_000 {
		a.Publish(changefeed.Event{Kind: changefeed.Note, ID: fmt.Sprintf("n%d", i)})
	}
	testkit.Eventually(t, 4*time.Second, "the event that drops everything", func() bool { return b.got(everything) })
	if b.Trusts(loaded) {
		t.Error("the receiver of an event that drops everything trusts entries loaded before it")
	}
	if n := testkit.Metric(t, a.reg, "sharenote_changefeed_overflows_total"); n != 1 {
		t.Errorf("overflows counted %v, want 1", n)
	}
}

// An operator's command publishes and flushes without running the feed.
func TestFlushSendsWhatIsPending(t *testing.T) {
	url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
	b := run(t, url, prefix)
	testkit.Eventually(t, 2*time.Second, "subscribed", func() bool { return b.Trusts(time.Now()) })
	rdb, err := redisx.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	cmd := feed(rdb, prefix)
	events := []changefeed.Event{{Kind: changefeed.Sessions, ID: "a1"}, {Kind: changefeed.Note, ID: "n1"}, {Kind: changefeed.Sessions, ID: "a1"}}
	for _, e := range events {
		cmd.Publish(e)
	}
	if err := cmd.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		testkit.Eventually(t, time.Second, "delivery of "+e.ID, func() bool { return b.got(e) })
	}
}
