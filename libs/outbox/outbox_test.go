package outbox_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/outbox"
	"github.com/sharenote/sharenote/libs/redisx"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// process is a process's change feed on Redis at url (running until the test ends) with
// what its handlers were given.
type process struct {
	*changefeed.Feed
	mu     sync.Mutex
	events map[changefeed.Event]int
}

func newProcess(t *testing.T, url, prefix string) *process {
	t.Helper()
	rdb, err := redisx.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	p := &process{Feed: changefeed.New(rdb, prefix, quiet, prometheus.NewRegistry()), events: map[changefeed.Event]int{}}
	p.OnChange(func(e changefeed.Event) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.events[e]++
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	testkit.Eventually(t, 3*time.Second, "a confirmed subscription", func() bool { return p.Trusts(time.Now()) })
	return p
}

func (p *process) count(e changefeed.Event) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.events[e]
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// write commits changes as the process of origin does, in their own transaction.
func write(t *testing.T, gdb *gorm.DB, origin string, changes ...note.Change) {
	t.Helper()
	if err := gdb.Transaction(func(tx *gorm.DB) error {
		return outbox.NewWriter(time.Now, origin, false).Write(tx, changes...)
	}); err != nil {
		t.Fatal(err)
	}
}

func rows(t *testing.T, gdb *gorm.DB) int64 {
	t.Helper()
	var n int64
	if err := gdb.Table("changes").Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// relayed is sharenote_changes_relayed_total{committer} in reg.
func relayed(t *testing.T, reg *prometheus.Registry, committer string) float64 {
	t.Helper()
	return testkit.Metric(t, reg, "sharenote_changes_relayed_total", "committer", committer)
}

var (
	noteN1   = changefeed.Event{Kind: changefeed.Note, ID: "n1"}
	accountA = changefeed.Event{Kind: changefeed.Account, ID: "A"}
	noteN2   = changefeed.Event{Kind: changefeed.Note, ID: "n2"}
)

// TestRelayAnnouncesAChangeItsProcessNeverDid: a change whose process committed it and
// died before telling anyone is announced by another process's relay: to that process's
// own caches and, over Redis, to every other; a change of names is its note's and its
// account's; the row is gone once announced (no edge configured).
func TestRelayAnnouncesAChangeItsProcessNeverDid(t *testing.T) {
	testkit.EachDB(t, func(t *testing.T, gdb *gorm.DB) {
		url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
		relaying, other := newProcess(t, url, prefix), newProcess(t, url, prefix)
		write(t, gdb, "a-process-that-died", note.Change{Account: "A", Note: "n1", Names: true})
		reg := prometheus.NewRegistry()
		if err := outbox.NewRelay(gdb, relaying.Feed, quiet, reg).Once(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := relayed(t, reg, "other"); n != 1 {
			t.Errorf("sharenote_changes_relayed_total{committer=other} = %v, want 1", n)
		}
		for _, e := range []changefeed.Event{noteN1, accountA} {
			if n := relaying.count(e); n != 1 {
				t.Errorf("the relaying process's caches were told %v %d times, want once", e, n)
			}
			testkit.Eventually(t, 2*time.Second, "the other process told of the change", func() bool { return other.count(e) == 1 })
		}
		if n := rows(t, gdb); n != 0 {
			t.Errorf("%d rows left after the relay announced them, want 0", n)
		}
	})
}

// TestRelayTellsItsOwnProcessOnce: a change the process committed itself is told to its
// caches at once (Changed, before the relay runs) and not again by its relay, which sends
// it to the others; a change of one note's body is that note's alone.
func TestRelayTellsItsOwnProcessOnce(t *testing.T) {
	testkit.EachDB(t, func(t *testing.T, gdb *gorm.DB) {
		url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
		self, other := newProcess(t, url, prefix), newProcess(t, url, prefix)
		reg := prometheus.NewRegistry()
		relay := outbox.NewRelay(gdb, self.Feed, quiet, reg)
		ch := note.Change{Account: "A", Note: "n2"}
		write(t, gdb, self.Origin(), ch)
		relay.Changed(context.Background(), ch)
		if n := self.count(noteN2); n != 1 {
			t.Fatalf("told %d times at once, want once", n)
		}
		if err := relay.Once(context.Background()); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 2*time.Second, "the other process told of the change", func() bool { return other.count(noteN2) == 1 })
		if mine, others := relayed(t, reg, "this"), relayed(t, reg, "other"); mine != 1 || others != 0 {
			t.Errorf("relayed %v of this process's changes and %v of others, want 1 and 0", mine, others)
		}
		if n, wide := self.count(noteN2), other.count(changefeed.Event{Kind: changefeed.Account, ID: "A"}); n != 1 || wide != 0 {
			t.Errorf("own caches told %d times, the account's reads dropped %d times; want 1 and 0", n, wide)
		}
	})
}

// TestRelayKeepsWhatRedisDidNotTake: a relay whose Redis is unreachable keeps the rows it
// could not send; once its claim's lease has passed, another relay announces them.
func TestRelayKeepsWhatRedisDidNotTake(t *testing.T) {
	testkit.EachDB(t, func(t *testing.T, gdb *gorm.DB) {
		url, prefix := testkit.RedisURL(t), testkit.NewRedisPrefix(t)
		down, err := redisx.Open("redis://" + testkit.FreeAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = down.Close() })
		cut := changefeed.New(down, prefix, quiet, prometheus.NewRegistry())
		write(t, gdb, "a-process-that-died", note.Change{Account: "A", Note: "n1"})
		if err := outbox.NewRelay(gdb, cut, quiet, prometheus.NewRegistry()).Once(context.Background()); err == nil {
			t.Fatal("a relay without Redis says it announced the change")
		}
		if n := rows(t, gdb); n != 1 {
			t.Fatalf("%d rows after a failed send, want the 1 kept", n)
		}
		other := newProcess(t, url, prefix)
		relay := outbox.NewRelay(gdb, other.Feed, quiet, prometheus.NewRegistry())
		testkit.Eventually(t, 3*time.Second, "another relay announces the change once the lease passed", func() bool {
			return relay.Once(context.Background()) == nil && other.count(noteN1) == 1
		})
		if n := rows(t, gdb); n != 0 {
			t.Errorf("%d rows left after the change was announced, want 0", n)
		}
	})
}
