package sharenote_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit"
)

// On the embedded default a cached page is re-checked once a second (no process can
// tell the others of a change). A page built from other notes keeps what it was built
// from, so that the re-check of an unchanged page is one statement, not a rebuild; a
// change made by another process on the same database still shows within the second.
func TestThePageRecheckOfAnUnchangedPageIsOneStatement(t *testing.T) {
	b := testkit.SQLiteBackend(t)
	s, other := start(t, b), start(t, b)
	acc := s.NewAccount(t, "writer")
	source := publishJSON(t, s, acc.Token, map[string]any{"path": "Source.md", "content": "# Source\n\nfirst words\n\n## Part\n\npart words\n"})
	publishJSON(t, s, acc.Token, map[string]any{"path": "Linked.md", "content": "# Linked\n\n## Heading\n\nlinked words\n"})
	page := publishJSON(t, s, acc.Token, map[string]any{"path": "Page.md",
		"content": "![[Source]]\n\n![[Source#Part]]\n\nSee [[Linked#Heading]] and [[Nowhere]].\n"})
	sql := watchStatements(t, s.App.DB())
	read := func(id string) string {
		return string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + page, Header: map[string]string{"X-Request-ID": id}}).Expect(t, 200, "").Body)
	}
	built := read("build")
	if !strings.Contains(built, "first words") || !strings.Contains(built, "#n-heading") {
		t.Fatalf("the page lacks its embed or its link's anchor:\n%s", built)
	}
	time.Sleep(1100 * time.Millisecond) // The entry is a second old: no longer trusted.
	if again := read("recheck"); again != built {
		t.Errorf("the re-checked page differs from the one built")
	}
	sql.mu.Lock()
	ran := sql.ran["recheck"]
	sql.mu.Unlock()
	if len(ran) != 1 {
		t.Errorf("the re-check of an unchanged page ran %d statements, want 1: %q", len(ran), ran)
	}

	began := time.Now()
	other.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + source, Token: acc.Token,
		JSON: map[string]any{"content": "# Source\n\nsecond words\n\n## Part\n\npart words\n"}}).Expect(t, 200, "")
	within(t, began, 1100*time.Millisecond, "another process's PATCH of an embedded note", func() bool {
		return strings.Contains(read(""), "second words")
	})
	began = time.Now()
	publishJSON(t, other, acc.Token, map[string]any{"path": "Nowhere.md", "content": "now somewhere"})
	within(t, began, 1100*time.Millisecond, "another process's publish of a note the page links to", func() bool {
		return !strings.Contains(read(""), `<span class="wikilink unresolved">Nowhere</span>`)
	})
}

// One change of a note that many pages embed rebuilds each of them at most once, when it
// is next read, on every replica: 50 pages read every 100 ms while the note changes every
// 2 s (30 times a minute) are rebuilt at most once per change, a page nobody reads is
// never rebuilt, and the histogram of rebuilds per change says so.
func TestAChangeRebuildsEachPageThatShowsItAtMostOnce(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		trust := testkit.WithEnv("SHARE_TRUSTED_PROXIES", "127.0.0.1/32")
		s1, s2 := start(t, b, trust), start(t, b, trust)
		acc := s1.NewAccount(t, "writer")
		source := publishJSON(t, s1, acc.Token, map[string]any{"path": "Source.md", "content": "version 0"})
		const readPages, unread, changes = 50, 5, 3
		var pages []string
		for i := range readPages + unread {
			pages = append(pages, publishJSON(t, s1, acc.Token, map[string]any{"path": fmt.Sprintf("Page %d.md", i), "content": "![[Source]]"}))
		}
		replicas := []*testkit.Server{s1, s2}
		// A reader per page and replica, each under the per-IP limit of 600 a minute.
		reader := func(r, i int) map[string]string {
			return map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", 1+r*len(pages)+i)}
		}
		for r, s := range replicas { // Every page built once, the unread ones too.
			for i, p := range pages {
				s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + p, Header: reader(r, i)}).Expect(t, 200, "")
			}
		}
		before := []float64{metric(t, s1, "sharenote_page_rebuilds_total"), metric(t, s2, "sharenote_page_rebuilds_total")}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		defer func() { close(stop); wg.Wait() }()
		for r, s := range replicas {
			for i, p := range pages[:readPages] {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						case <-time.After(100 * time.Millisecond):
							s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + p, Header: reader(r, i)}).Expect(t, 200, "")
						}
					}
				})
			}
		}
		for k := 1; k <= changes; k++ {
			time.Sleep(2 * time.Second)
			s1.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + source, Token: acc.Token,
				JSON: map[string]any{"content": fmt.Sprintf("version %d", k)}}).Expect(t, 200, "")
		}
		time.Sleep(2 * time.Second)
		for i, s := range replicas {
			rebuilt := metric(t, s, "sharenote_page_rebuilds_total") - before[i]
			if rebuilt > readPages*changes {
				t.Errorf("replica %d rebuilt %v pages in %d changes of the note %d pages read embed, want at most %d (once per change, none unread)",
					i+1, rebuilt, changes, readPages, readPages*changes)
			}
			if rebuilt < readPages {
				t.Errorf("replica %d rebuilt %v pages, want at least %d: the reads did not see the changes", i+1, rebuilt, readPages)
			}
			// A change is observed once the pages nobody reads are settled by the next one.
			observed := metric(t, s, "sharenote_page_rebuilds_per_change_count")
			t.Logf("replica %d: %v rebuilds for %d changes of a note %d read and %d unread pages embed; %v changes observed, %v rebuilds",
				i+1, rebuilt, changes, readPages, unread, observed, metric(t, s, "sharenote_page_rebuilds_per_change_sum"))
			if within := metric(t, s, fmt.Sprintf(`sharenote_page_rebuilds_per_change_bucket{le="%d"}`, readPages)); within != observed {
				t.Errorf("replica %d observed %v changes that rebuilt more than the %d pages read", i+1, observed-within, readPages)
			}
			if i == 0 && observed < changes-1 {
				t.Errorf("replica %d observed %v changes, want at least %d", i+1, observed, changes-1)
			}
		}
	})
}
