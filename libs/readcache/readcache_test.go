package readcache_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/readcache"
	"github.com/sharenote/sharenote/libs/testkit"
)

// trusted is a feed that vouches for everything: entries are fresh until dropped.
func trusted(time.Time) bool { return true }

func entry(note, owner, body string) *readcache.Entry {
	return &readcache.Entry{Body: []byte(body), ETag: `"` + body + `"`, Note: note, Owner: owner}
}

func load(e *readcache.Entry, calls *atomic.Int64) func(context.Context, *readcache.Entry) (*readcache.Entry, error) {
	return func(context.Context, *readcache.Entry) (*readcache.Entry, error) {
		calls.Add(1)
		return e, nil
	}
}

func TestConcurrentMissesLoadOnce(t *testing.T) {
	c := readcache.New(1<<20, trusted, time.Now, prometheus.NewRegistry())
	var calls atomic.Int64
	release := make(chan struct{})
	slow := func(context.Context, *readcache.Entry) (*readcache.Entry, error) {
		calls.Add(1)
		<-release
		return entry("n", "o", "body"), nil
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if e, err := c.Load(context.Background(), "k", slow); err != nil || string(e.Body) != "body" {
				t.Errorf("load: %v %v", e, err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("50 concurrent misses loaded %d times, want 1", n)
	}
	if _, ok := c.Get("k"); !ok {
		t.Error("the loaded entry was not stored")
	}
}

func TestDropsRemoveEntriesOfTheirNoteOrOwner(t *testing.T) {
	c := readcache.New(1<<20, trusted, time.Now, prometheus.NewRegistry())
	var calls atomic.Int64
	for _, k := range []struct{ key, note, owner string }{{"a1", "a", "x"}, {"a2", "a", "x"}, {"b1", "b", "x"}, {"c1", "c", "y"}} {
		if _, err := c.Load(context.Background(), k.key, load(entry(k.note, k.owner, k.key), &calls)); err != nil {
			t.Fatal(err)
		}
	}
	present := func() string {
		var out []string
		for _, k := range []string{"a1", "a2", "b1", "c1"} {
			if _, ok := c.Get(k); ok {
				out = append(out, k)
			}
		}
		return strings.Join(out, " ")
	}
	c.Drop(changefeed.Event{Kind: changefeed.Note, ID: "a"})
	if got := present(); got != "b1 c1" {
		t.Errorf("after dropping note a: %q, want b1 c1", got)
	}
	c.Drop(changefeed.Event{Kind: changefeed.Account, ID: "x"})
	if got := present(); got != "c1" {
		t.Errorf("after dropping owner x: %q, want c1", got)
	}
	c.Drop(changefeed.Event{Kind: changefeed.Sessions, ID: "y"})
	if got := present(); got != "c1" {
		t.Errorf("a sessions event dropped reads: %q", got)
	}
}

func TestALoadThatRacesADropIsNotStored(t *testing.T) {
	c := readcache.New(1<<20, trusted, time.Now, prometheus.NewRegistry())
	_, err := c.Load(context.Background(), "k", func(context.Context, *readcache.Entry) (*readcache.Entry, error) {
		// The publication changes while its old state is being read.
		c.Drop(changefeed.Event{Kind: changefeed.Note, ID: "n"})
		return entry("n", "o", "old"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("k"); ok {
		t.Error("a load that began before a drop of its note was stored")
	}
	// A derived variant of an entry dropped after it was loaded is not stored either.
	base, _ := c.Load(context.Background(), "k", func(context.Context, *readcache.Entry) (*readcache.Entry, error) {
		return entry("n", "o", "new"), nil
	})
	c.Drop(changefeed.Event{Kind: changefeed.Note, ID: "n"})
	c.Derive("k-gz", base, `"gz"`, func(b *readcache.Entry) *readcache.Entry { return entry("n", "o", "gz") })
	if _, ok := c.Get("k-gz"); ok {
		t.Error("a variant of a dropped entry was stored")
	}
}

func TestStaleEntriesAreReloadedOrKept(t *testing.T) {
	var fresh atomic.Bool
	c := readcache.New(1<<20, func(time.Time) bool { return fresh.Load() }, time.Now, prometheus.NewRegistry())
	var calls atomic.Int64
	first := entry("n", "o", "v1")
	fresh.Store(true)
	if _, err := c.Load(context.Background(), "k", load(first, &calls)); err != nil {
		t.Fatal(err)
	}
	fresh.Store(false) // The feed no longer vouches and the entry is old.
	if _, ok := c.Get("k"); ok {
		t.Fatal("a stale entry was served")
	}
	var got *readcache.Entry
	_, err := c.Load(context.Background(), "k", func(_ context.Context, stale *readcache.Entry) (*readcache.Entry, error) {
		got = stale
		return stale, nil // Nothing changed.
	})
	if err != nil || got == nil || string(got.Body) != "v1" {
		t.Fatalf("the load was not given the stale entry: %v %v", got, err)
	}
}

func TestNegativeEntriesAreShortLived(t *testing.T) {
	c := readcache.New(1<<20, trusted, time.Now, prometheus.NewRegistry())
	var calls atomic.Int64
	missing := &readcache.Entry{NotFound: true, Note: "n"}
	if _, err := c.Load(context.Background(), "k", load(missing, &calls)); err != nil {
		t.Fatal(err)
	}
	if e, ok := c.Get("k"); !ok || !e.NotFound {
		t.Fatal("the negative entry was not kept")
	}
	if readcache.NegativeTTL > 10*time.Second {
		t.Errorf("NegativeTTL = %v: not short", readcache.NegativeTTL)
	}
}

func TestTheByteBoundHolds(t *testing.T) {
	const bound = 64 << 10
	reg := prometheus.NewRegistry()
	c := readcache.New(bound, trusted, time.Now, reg)
	var calls atomic.Int64
	body := strings.Repeat("x", 1000)
	for i := range 500 {
		key := "k" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if _, err := c.Load(context.Background(), key, load(entry(key, "o", body), &calls)); err != nil {
			t.Fatal(err)
		}
	}
	if v := testkit.Metric(t, reg, "sharenote_readcache_bytes"); v > bound || v < bound/2 {
		t.Errorf("cache holds %v bytes, want at most %d (and not far below)", v, bound)
	}
}

func TestAnEntryLargerThanASixteenthIsNotStored(t *testing.T) {
	c := readcache.New(16<<10, trusted, time.Now, prometheus.NewRegistry())
	var calls atomic.Int64
	e, err := c.Load(context.Background(), "big", load(entry("n", "o", strings.Repeat("x", 2<<10)), &calls))
	if err != nil || len(e.Body) != 2<<10 {
		t.Fatalf("load: %v", err)
	}
	if _, ok := c.Get("big"); ok {
		t.Error("an entry over the per-entry bound was stored")
	}
}

// An entry that goes stale at a time (its page links to a note that expires then) is
// served until then by the cache's clock and loaded again from then on.
func TestEntriesGoStaleAtTheirTime(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	c := readcache.New(1<<20, trusted, func() time.Time { return now }, prometheus.NewRegistry())
	stale := now.Add(time.Minute)
	e := entry("n", "o", "body")
	e.StaleAt = &stale
	var calls atomic.Int64
	if _, err := c.Load(context.Background(), "k", load(e, &calls)); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("k"); !ok {
		t.Error("the entry was not served before its time")
	}
	if age := e.MaxAge(now, time.Hour); age != time.Minute {
		t.Errorf("max age %v, want the minute left before it goes stale", age)
	}
	now = stale
	if _, ok := c.Get("k"); ok {
		t.Error("the entry was served at its time")
	}
	if _, err := c.Load(context.Background(), "k", load(e, &calls)); err != nil || calls.Load() != 2 {
		t.Errorf("loads %d (%v), want the entry loaded again", calls.Load(), err)
	}
}
