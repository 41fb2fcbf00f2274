package edge_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/edge"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/outbox"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// testBounds are small bounds; the resend is an hour unless a test wants it.
var testBounds = edge.Bounds{Batch: 100, MaxBacklog: 1000, OutageBound: time.Hour, Resend: time.Hour,
	Retry: 10 * time.Millisecond, Timeout: 2 * time.Second, Lease: 10 * time.Second, MaxKeys: 50}

func newWorker(t *testing.T, gdb *gorm.DB, url string, b edge.Bounds) (*edge.Worker, *edge.Keys) {
	t.Helper()
	keys, err := edge.LoadKeys(context.Background(), gdb)
	if err != nil {
		t.Fatal(err)
	}
	return edge.NewWorker(gdb, keys, []string{url}, b, time.Now, prometheus.NewRegistry()), keys
}

// write writes changes to the outbox, due for the edge.
func write(t *testing.T, gdb *gorm.DB, changes ...note.Change) {
	t.Helper()
	if err := gdb.Transaction(func(tx *gorm.DB) error { return outbox.NewWriter(time.Now, "", true).Write(tx, changes...) }); err != nil {
		t.Fatal(err)
	}
}

// outboxRows counts the rows the edge has left.
func outboxRows(t *testing.T, gdb *gorm.DB) int64 {
	t.Helper()
	var n int64
	if err := gdb.Table("changes").Where("edge_due_ms IS NOT NULL").Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// unsent counts the rows not sent yet.
func unsent(t *testing.T, gdb *gorm.DB) int64 {
	t.Helper()
	var n int64
	if err := gdb.Table("changes").Where("edge_due_ms IS NOT NULL AND edge_sends = 0").Count(&n).Error; err != nil {
		t.Error(err)
		return 0
	}
	return n
}

func run(t *testing.T, w *edge.Worker) {
	t.Helper()
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestWorkerCoalescesPerAuthor: each key is sent once per round, hard where any row wants
// it hard: a note's change drops its content key, and its reference key when what links
// to it show changed (References); every row drops its author's key; a change without a
// note drops both keys of every one of the account's notes that is not unpublished. Each
// row is sent twice (the second after Resend) and then left to the change feed.
func TestWorkerCoalescesPerAuthor(t *testing.T) {
	testkit.EachDB(t, func(t *testing.T, gdb *gorm.DB) {
		fake := testkit.StartFakeEdge(t)
		b := testBounds
		b.Resend = 50 * time.Millisecond
		w, keys := newWorker(t, gdb, fake.URL, b)
		now := time.Now()
		for _, a := range []string{"A", "B"} {
			if err := gdb.Exec("INSERT INTO accounts (cuid, name, email, display_name, created_at) VALUES (?, ?, ?, ?, ?)",
				a, a, a+"@example.com", a, now).Error; err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range []struct {
			cuid, account string
			unpublished   bool
		}{{"n1", "A", false}, {"n4", "A", false}, {"n5", "A", true}, {"m3", "B", false}} {
			if err := gdb.Exec("INSERT INTO publications (cuid, account_cuid, content, show_properties, unpublished, created_ms, created_at, updated_at) "+
				"VALUES (?, ?, '', TRUE, ?, ?, ?, ?)", n.cuid, n.account, n.unpublished, now.UnixMilli(), now, now).Error; err != nil {
				t.Fatal(err)
			}
		}
		write(t, gdb, note.Change{Account: "A", Note: "n1"}, note.Change{Account: "A", Note: "n2", References: true}, note.Change{Account: "A"},
			note.Change{Account: "A", Note: "n3", References: true, Hard: true}, note.Change{Account: "A", Note: "n4", Hard: true},
			note.Change{Account: "B", Note: "m1", References: true, Hard: true}, note.Change{Account: "B", Note: "m2"})
		run(t, w)
		wantHard := []string{keys.Content("m1"), keys.Reference("m1"), keys.Author("B"), keys.Content("n3"), keys.Reference("n3"),
			keys.Author("A"), keys.Content("n4")}
		// A's row without a note: n1 and n4, not the unpublished n5, nor B's m3.
		wantSoft := []string{keys.Content("n1"), keys.Reference("n1"), keys.Content("n2"), keys.Reference("n2"), keys.Reference("n4"),
			keys.Content("m2")}
		slices.Sort(wantHard)
		slices.Sort(wantSoft)
		check := func(round int) {
			p := fake.Purges()
			if len(p) != 2*round {
				t.Fatalf("round %d: %d requests, want 2: %+v", round, len(p), p)
			}
			hard, soft := p[2*round-2], p[2*round-1]
			if !slices.Equal(hard.Hard, wantHard) || len(hard.Soft) != 0 || !slices.Equal(soft.Soft, wantSoft) || len(soft.Hard) != 0 {
				t.Errorf("round %d: sent %+v and %+v, want hard %v then soft %v", round, hard, soft, wantHard, wantSoft)
			}
		}
		check(1)
		run(t, w) // Not due again yet.
		check(1)
		time.Sleep(60 * time.Millisecond)
		run(t, w)
		check(2)
		if n := outboxRows(t, gdb); n != 0 {
			t.Errorf("%d rows left after the second send, want 0", n)
		}
	})
}

// TestKeysHeader: a read carries its note's content key, its embeds' content keys and its
// links' reference keys, each once and 64 note keys at most; past them, its author's key
// instead of the rest. No key shows the note or the account, and the kinds differ.
func TestKeysHeader(t *testing.T) {
	k := edge.NewKeys([]byte("secret"))
	many := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprint(prefix, i))
		}
		return out
	}
	for _, c := range []struct {
		name                 string
		embeds, links        []string
		want                 []string
		author               bool
		wantNotes, wantTotal int
	}{
		{"a note alone", nil, nil, []string{k.Content("p")}, false, 1, 1},
		{"embeds and links", []string{"e1", "e2", "e1"}, []string{"l1", "e1"},
			[]string{k.Content("p"), k.Content("e1"), k.Content("e2"), k.Reference("l1"), k.Reference("e1")}, false, 5, 5},
		{"64 note keys", many("e", 30), many("l", 33), nil, false, 64, 64},
		{"65 note keys", many("e", 30), many("l", 34), nil, true, 64, 65},
		{"500 links", nil, many("l", 500), nil, true, 64, 65},
	} {
		got := strings.Fields(k.Header("p", "A", c.embeds, c.links))
		if c.want != nil && !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		notes := 0
		for _, key := range got {
			if key != k.Author("A") {
				notes++
			}
		}
		if notes != c.wantNotes || len(got) != c.wantTotal || slices.Contains(got, k.Author("A")) != c.author || got[0] != k.Content("p") {
			t.Errorf("%s: %d keys, %d of notes, author key %t; want %d, %d, %t, the note's content key first",
				c.name, len(got), notes, slices.Contains(got, k.Author("A")), c.wantTotal, c.wantNotes, c.author)
		}
	}
	kinds := []string{k.Content("x"), k.Reference("x"), k.Author("x")}
	for i, key := range kinds {
		if len(key) != 17 || slices.Contains(kinds[i+1:], key) {
			t.Errorf("key %q: not 17 bytes, or another kind's too", key)
		}
	}
}

// TestWorkerRetriesThroughAnOutage: a purge the edge does not take stays in the outbox
// and is sent once the edge is back.
func TestWorkerRetriesThroughAnOutage(t *testing.T) {
	testkit.EachDB(t, func(t *testing.T, gdb *gorm.DB) {
		fake := testkit.StartFakeEdge(t)
		w, keys := newWorker(t, gdb, fake.URL, testBounds)
		fake.Stop()
		write(t, gdb, note.Change{Account: "A", Note: "n1", References: true, Hard: true})
		if err := w.Run(context.Background()); err == nil {
			t.Fatal("Run with the edge down: no error")
		}
		fake.Start(t)
		time.Sleep(20 * time.Millisecond)
		run(t, w)
		if hard, _, _ := fake.Sent(keys.Content("n1"), time.Time{}); len(hard) != 1 {
			t.Errorf("after the outage, the hard purge was sent %d times, want 1", len(hard))
		}
	})
}

// TestWorkerPurgesEverythingOnceOverTheBound: a backlog past MaxBacklog, or a row older
// than OutageBound, is one purge of everything, by one of two workers.
func TestWorkerPurgesEverythingOnceOverTheBound(t *testing.T) {
	testkit.EachDB(t, func(t *testing.T, gdb *gorm.DB) {
		for _, tc := range []struct {
			name string
			rows int
			b    func(*edge.Bounds)
		}{
			{"backlog", 30, func(b *edge.Bounds) { b.MaxBacklog = 20 }},
			{"outage", 3, func(b *edge.Bounds) { b.OutageBound = 50 * time.Millisecond }},
		} {
			fake := testkit.StartFakeEdge(t)
			b := testBounds
			tc.b(&b)
			w1, _ := newWorker(t, gdb, fake.URL, b)
			w2, _ := newWorker(t, gdb, fake.URL, b)
			for i := range tc.rows {
				write(t, gdb, note.Change{Account: "A", Note: fmt.Sprint("n", i), References: true})
			}
			time.Sleep(60 * time.Millisecond)
			var wg sync.WaitGroup
			for _, w := range []*edge.Worker{w1, w2} {
				wg.Go(func() { _ = w.Run(context.Background()) })
			}
			wg.Wait()
			p := fake.Purges()
			if len(p) != 1 || !p[0].All {
				t.Errorf("%s: sent %+v, want one purge of everything", tc.name, p)
			}
			if n := outboxRows(t, gdb); n != 0 {
				t.Errorf("%s: %d rows left, want 0", tc.name, n)
			}
		}
	})
}

// TestWorkersNeverSendARowTwiceAtOnce: two workers draining one outbox through a slow
// edge send every row exactly once (the resend is an hour away).
func TestWorkersNeverSendARowTwiceAtOnce(t *testing.T) {
	testkit.EachDB(t, func(t *testing.T, gdb *gorm.DB) {
		fake := testkit.StartFakeEdge(t)
		fake.Delay = 5 * time.Millisecond
		b := testBounds
		b.Batch, b.MaxKeys = 7, 3
		const n = 300
		var purges []note.Change
		for i := range n {
			purges = append(purges, note.Change{Account: fmt.Sprint("a", i%10), Note: fmt.Sprint("n", i), References: true})
		}
		write(t, gdb, purges...)
		var wg sync.WaitGroup
		var keys *edge.Keys
		for range 2 {
			w, k := newWorker(t, gdb, fake.URL, b)
			keys = k
			wg.Go(func() {
				for unsent(t, gdb) > 0 && t.Context().Err() == nil {
					_ = w.Run(context.Background())
				}
			})
		}
		wg.Wait()
		count := map[string]int{}
		for _, p := range fake.Purges() {
			for _, k := range p.Soft {
				count[k]++
			}
		}
		for _, p := range purges {
			if c := count[keys.Content(p.Note)]; c != 1 {
				t.Errorf("note %s purged %d times, want 1", p.Note, c)
			}
		}
	})
}
