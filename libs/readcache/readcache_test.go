package readcache_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
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

// TestALoadThatRacesADropIsNotServed: a load that began before a drop of what it shows
// may have read the old state; it is never served, but the next load is offered its
// bytes (to reuse when they show the new state), so that a rebuild that raced the
// change's own drop is not done twice.
func TestALoadThatRacesADropIsNotServed(t *testing.T) {
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
		t.Error("a load that began before a drop of its note is served")
	}
	if _, err := c.Load(context.Background(), "k", func(_ context.Context, stale *readcache.Entry) (*readcache.Entry, error) {
		if stale == nil {
			t.Error("the next load is not offered the raced load's bytes")
		}
		return entry("n", "o", "new"), nil
	}); err != nil {
		t.Fatal(err)
	}
	// A derived variant of an entry dropped after it was loaded is not served either.
	base, _ := c.Load(context.Background(), "k", func(context.Context, *readcache.Entry) (*readcache.Entry, error) {
		return entry("n", "o", "new"), nil
	})
	c.Drop(changefeed.Event{Kind: changefeed.Note, ID: "n"})
	c.Derive("k-gz", base, `"gz"`, func(b *readcache.Entry) *readcache.Entry { return entry("n", "o", "gz") })
	if _, ok := c.Get("k-gz"); ok {
		t.Error("a variant of a dropped entry is served")
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

func TestAnEverythingEventDropsEveryEntry(t *testing.T) {
	c := readcache.New(1<<20, trusted, time.Now, prometheus.NewRegistry())
	var calls atomic.Int64
	for _, k := range []string{"a", "b"} {
		if _, err := c.Load(context.Background(), k, load(entry(k, "o"+k, k), &calls)); err != nil {
			t.Fatal(err)
		}
	}
	c.Drop(changefeed.Event{Kind: changefeed.Everything})
	for _, k := range []string{"a", "b"} {
		if _, ok := c.Get(k); ok {
			t.Errorf("%s is served after an event that drops everything", k)
		}
	}
}

// Negative entries leave the cache when they expire: a burst of unknown cuids does not
// hold memory.
func TestNegativeEntriesAreRemovedWhenTheyExpire(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := readcache.New(1<<20, trusted, time.Now, reg)
	var calls atomic.Int64
	for _, k := range []string{"x", "y"} {
		if _, err := c.Load(context.Background(), k, load(&readcache.Entry{NotFound: true, Note: k}, &calls)); err != nil {
			t.Fatal(err)
		}
	}
	if n := testkit.Metric(t, reg, "sharenote_readcache_entries"); n != 2 {
		t.Fatalf("entries %v, want the 2 negative ones", n)
	}
	if n := testkit.Metric(t, reg, "sharenote_readcache_negative_entries"); n != 2 {
		t.Errorf("negative entries %v, want 2", n)
	}
	time.Sleep(readcache.NegativeTTL + 300*time.Millisecond)
	if n, b := testkit.Metric(t, reg, "sharenote_readcache_entries"), testkit.Metric(t, reg, "sharenote_readcache_bytes"); n != 0 || b != 0 {
		t.Errorf("after their TTL: %v entries of %v bytes, want none", n, b)
	}
}

// Random unknown cuids (a scan) fill a bound of their own: they never evict the entries
// of real publications.
func TestNegativeLookupsDoNotEvictRealEntries(t *testing.T) {
	const bound = 1 << 20
	reg := prometheus.NewRegistry()
	c := readcache.New(bound, trusted, time.Now, reg)
	var calls atomic.Int64
	if _, err := c.Load(context.Background(), "real", load(entry("real", "o", "body"), &calls)); err != nil {
		t.Fatal(err)
	}
	for i := range 50_000 {
		key := fmt.Sprintf("/api/notes/\x00missing%08d\x00", i)
		if _, err := c.Load(context.Background(), key, load(&readcache.Entry{NotFound: true, Note: key}, &calls)); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := c.Get("real"); !ok {
		t.Error("50,000 negative lookups evicted a real entry")
	}
	if b := testkit.Metric(t, reg, "sharenote_readcache_bytes"); b > bound {
		t.Errorf("cache holds %v bytes, over its bound of %d", b, bound)
	}
}

// body reads the whole body of a served entry, held or streamed.
func body(t *testing.T, e *readcache.Entry) []byte {
	t.Helper()
	if e.Body != nil || e.Open == nil {
		return e.Body
	}
	rc, err := e.Open(context.Background(), 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != e.Size {
		t.Errorf("streamed %d bytes, Size says %d", len(b), e.Size)
	}
	return b
}

// A representation over the per-entry bound that compresses under it (a note of "<",
// each escaped to six bytes of JSON) is kept compressed and served from the cache.
func TestALargeEntryIsKeptCompressed(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := readcache.New(16<<20, trusted, time.Now, reg) // A sixteenth: 1 MiB.
	big := []byte(`{"content":"` + strings.Repeat(`\u003c`, 600_000) + `"}`)
	var calls atomic.Int64
	e := &readcache.Entry{Body: big, ContentType: "application/json", ETag: `"big"`, Note: "n", Owner: "o"}
	if _, err := c.Load(context.Background(), "big", load(e, &calls)); err != nil {
		t.Fatal(err)
	}
	got, ok := c.Get("big")
	if !ok {
		t.Fatalf("a %d-byte entry that compresses well was not kept", len(big))
	}
	if !bytes.Equal(body(t, got), big) {
		t.Fatal("the kept entry serves other bytes")
	}
	if b := testkit.Metric(t, reg, "sharenote_readcache_bytes"); b > 1<<20 {
		t.Errorf("the entry counts %v bytes, not its compressed size", b)
	}
	if got.Open != nil {
		rc, err := got.Open(context.Background(), 12, 12)
		if err != nil {
			t.Fatal(err)
		}
		part, _ := io.ReadAll(rc)
		_ = rc.Close()
		if string(part) != `\u003c\u003c` {
			t.Errorf("a range of the kept entry reads %q", part)
		}
	}
	// Its compressed variants are made from its whole body.
	c.Derive("big-gz", got, `"big-gz"`, func(b *readcache.Entry) *readcache.Entry {
		if !bytes.Equal(b.Body, big) {
			t.Error("a variant was derived from other bytes than the body")
		}
		v := *b
		v.Body, v.Encoding, v.ETag = []byte("gz"), "gzip", `"big-gz"`
		return &v
	})
	// A reload that finds the validator unchanged keeps it as it is.
	c.Drop(changefeed.Event{Kind: changefeed.Note, ID: "n"})
	if _, err := c.Load(context.Background(), "big", func(_ context.Context, stale *readcache.Entry) (*readcache.Entry, error) {
		return (&readcache.Entry{Note: "n", Owner: "o"}).Reusing(stale), nil
	}); err != nil {
		t.Fatal(err)
	}
	again, ok := c.Get("big")
	if !ok || !bytes.Equal(body(t, again), big) {
		t.Error("the reused entry was not kept with its bytes")
	}
	if b := testkit.Metric(t, reg, "sharenote_readcache_bytes"); b > 1<<20 {
		t.Errorf("after the reuse the cache counts %v bytes", b)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("loads %d", n)
	}
}

func TestANoteChangeDropsThePagesThatEmbedIt(t *testing.T) {
	c := readcache.New(1<<20, trusted, time.Now, prometheus.NewRegistry())
	var calls atomic.Int64
	page := entry("p", "x", "page")
	page.Embeds = []string{"e"}
	if _, err := c.Load(context.Background(), "page", load(page, &calls)); err != nil {
		t.Fatal(err)
	}
	c.Drop(changefeed.Event{Kind: changefeed.Note, ID: "e"})
	if _, ok := c.Get("page"); ok {
		t.Error("a page embedding a changed note is still served")
	}
	// A load that read the embedded note before it changed is not served.
	_, err := c.Load(context.Background(), "again", func(context.Context, *readcache.Entry) (*readcache.Entry, error) {
		c.Drop(changefeed.Event{Kind: changefeed.Note, ID: "e"})
		return page, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("again"); ok {
		t.Error("a load that raced a drop of an embedded note is served")
	}
}

// A change's rebuilds are observed once every page it made stale was read again, changed
// again or evicted: a page its re-check kept, a page nobody read after the change and an
// entry that is no page are not rebuilds.
func TestRebuildsPerChangeCountEachPageTheChangeMadeStaleOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := readcache.New(1<<20, trusted, time.Now, reg)
	ctx := context.Background()
	page := func(body string) *readcache.Entry {
		e := entry(body, "o", body)
		e.Embeds = []string{"s"}
		e.Unchanged = func(context.Context) (bool, error) { return false, nil }
		return e
	}
	var calls atomic.Int64
	rebuild := func(key string) {
		if _, err := c.Load(ctx, key, load(page(key+" again"), &calls)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"p1", "p2", "p3"} {
		rebuild(k)
	}
	if _, err := c.Load(ctx, "s", load(entry("s", "o", "s"), &calls)); err != nil {
		t.Fatal(err)
	}
	observed := func(wantCount uint64, wantSum float64) {
		t.Helper()
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range families {
			if mf.GetName() == "sharenote_page_rebuilds_per_change" {
				h := mf.GetMetric()[0].GetHistogram()
				if h.GetSampleCount() != wantCount || h.GetSampleSum() != wantSum {
					t.Errorf("rebuilds per change: %d changes, %v rebuilds; want %d, %v", h.GetSampleCount(), h.GetSampleSum(), wantCount, wantSum)
				}
				return
			}
		}
		t.Fatal("no histogram sharenote_page_rebuilds_per_change")
	}

	c.Drop(changefeed.Event{Kind: changefeed.Note, ID: "s"})
	rebuild("p1")
	if _, err := c.Load(ctx, "p2", func(_ context.Context, stale *readcache.Entry) (*readcache.Entry, error) {
		return stale.Kept(), nil
	}); err != nil {
		t.Fatal(err)
	}
	observed(0, 0) // p3 was not read yet.
	c.Drop(changefeed.Event{Kind: changefeed.Note, ID: "s"})
	observed(1, 1) // p3 was never read after the first change; p2 was kept.
	for _, k := range []string{"p1", "p2", "p3"} {
		rebuild(k)
	}
	observed(2, 4)
	c.Drop(changefeed.Event{Kind: changefeed.Account, ID: "o"})
	rebuild("p1")
	rebuild("p1") // Fresh now: not loaded again.
	c.Drop(changefeed.Event{Kind: changefeed.Everything})
	observed(2, 4) // A drop of everything settles nothing.
	for _, k := range []string{"p2", "p3"} {
		rebuild(k)
	}
	observed(3, 7)
}
