package sharenote_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/libs/testkit"
)

// One author cannot spoil another's pages: these tests reproduce the findings of an
// attacker's review of the renderer and the read path.

// storedRender returns the stored render of a publication: its version and HTML.
func storedRender(t *testing.T, b testkit.Backend, cuid string) (int, string) {
	t.Helper()
	var row struct {
		HTML          string
		RenderVersion int
	}
	if err := testkit.OpenDB(t, b).Raw("SELECT html, render_version FROM publications WHERE cuid = ?", cuid).Scan(&row).Error; err != nil {
		t.Fatal(err)
	}
	return row.RenderVersion, row.HTML
}

// Two accounts' notes that are slow to parse, published at once, used to take both
// render slots, so that a third account's one-line note waited past its deadline and was
// stored as plain text ("the renderer was busy") for good. Renders now wait in a queue
// that is fair between accounts, with a slot kept for the others, and a fallback that
// other work caused is never stored.
func TestTwoBombsDoNotSpoilAnotherAccountsNote(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		bombers := []testkit.Account{s.NewAccount(t, "bomber1"), s.NewAccount(t, "bomber2")}
		victim := s.NewAccount(t, "victim")
		// goldmark parsed this shape in time quadratic in its length (240 KiB: ~11 s).
		bomb := strings.Repeat("[a](b", 240<<10/5)
		var wg sync.WaitGroup
		for _, acc := range bombers {
			wg.Go(func() {
				s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token, JSON: map[string]any{"content": bomb}}).Expect(t, 200, "")
			})
		}
		time.Sleep(300 * time.Millisecond) // the bombs hold their slots
		var created struct {
			CUID     string
			Warnings []struct{ Code, Message string }
		}
		s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: victim.Token,
			JSON: map[string]any{"content": "# Fine\n\nA *note*."}}).Expect(t, 200, "").Decode(t, &created)
		if len(created.Warnings) != 0 {
			t.Errorf("the victim's publish warned %+v", created.Warnings)
		}
		page := string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + created.CUID}).Expect(t, 200, "").Body)
		if !strings.Contains(page, "<em>note</em>") {
			t.Errorf("the victim's page is not rendered:\n%.600s", page)
		}
		if v, html := storedRender(t, b, created.CUID); v != render.Version || strings.HasPrefix(html, "<pre>") {
			t.Errorf("the victim's stored render: version %d, html %.80q", v, html)
		}
		wg.Wait()
	})
}

// A render of an older renderer is served as it is: no read renders (an anonymous reader
// could otherwise make the service render any note it knows, in its GET). The
// background of a writing target renders it again, once however many replicas run, and
// every replica serves the new render within a second of its being stored.
func TestReadsNeverRenderAndAStaleRenderIsRedoneOnce(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		clock := testkit.NewClock()
		replicas := []*testkit.Server{start(t, b, testkit.WithClock(clock))}
		if b.RedisURL != "" {
			replicas = append(replicas, start(t, b, testkit.WithClock(clock)))
		}
		acc := replicas[0].NewAccount(t, "writer")
		id := publishJSON(t, replicas[0], acc.Token, map[string]any{"content": "# Heading\n\nBody *text*."})
		// As a row stored by an older renderer looks; the background may take it in a minute.
		if err := testkit.OpenDB(t, b).Exec("UPDATE publications SET html = '<p>old render</p>', render_version = 1, render_retry_ms = ? WHERE cuid = ?",
			clock.Now().Add(time.Minute).UnixMilli(), id).Error; err != nil {
			t.Fatal(err)
		}
		renders := func() (n float64) {
			for _, s := range replicas {
				n += metric(t, s, `sharenote_note_renders_total{cause="background",outcome="final"}`)
			}
			return n
		}
		page := func(s *testkit.Server) string {
			return string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + id}).Expect(t, 200, "").Body)
		}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				if p := page(replicas[i%len(replicas)]); !strings.Contains(p, "<p>old render</p>") {
					t.Errorf("a read did not serve the stored render:\n%.600s", p)
				}
			})
		}
		wg.Wait()
		if n := renders(); n != 0 {
			t.Errorf("%v renders before the retry time", n)
		}
		clock.Advance(2 * time.Minute)
		began := time.Now()
		within(t, began, 3*time.Second, "the background render", func() bool { return renders() == 1 })
		rendered := time.Now()
		for _, s := range replicas {
			within(t, rendered, time.Second, "the new render on every replica", func() bool { return strings.Contains(page(s), "<em>text</em>") })
		}
		if v, html := storedRender(t, b, id); v != render.Version || !strings.Contains(html, "<em>text</em>") {
			t.Errorf("stored render: version %d, html %q", v, html)
		}
		time.Sleep(time.Second) // every replica's background ran again meanwhile
		if n := renders(); n != 1 {
			t.Errorf("%v background renders, want 1", n)
		}
	})
}

// Retitling a note used to render every note that links to it again, two quick
// retitles stored them as plain text, and 5,000 linking notes were one message each.
// Links now resolve when a page is built: a retitle is one message for the author,
// renders nothing, and every linking page on another replica follows within a second,
// while another account's unshare is not delayed.
func TestARetitleIsOneMessageAndEveryLinkingPageFollows(t *testing.T) {
	b := testkit.PostgresBackend(t)
	// Each read comes from an address of its own, as through an ingress: 10,000 reads
	// from one address would meet the per-IP limit.
	proxied := testkit.WithEnv("SHARE_TRUSTED_PROXIES", "127.0.0.1/32")
	s1, s2 := start(t, b, proxied), start(t, b, proxied)
	author, other := s1.NewAccount(t, "author"), s1.NewAccount(t, "other")
	target := publishJSON(t, s1, author.Token, map[string]any{"title": "Old name", "content": "The target."})
	first := publishJSON(t, s1, author.Token, map[string]any{"title": "Linker", "content": "See [[New name]]."})
	const linkers = 5000
	cuids := copyNote(t, testkit.OpenDB(t, b), first, "Linker", linkers)
	unlinked, linked := `<span class="wikilink unresolved">New name</span>`, `<a class="wikilink" href="`+s2.URL+"/s/"+target+`">New name</a>`
	if wrong := pagesLacking(t, s2, cuids, unlinked); wrong != 0 { // and now the second replica caches them
		t.Fatalf("%d linking pages not unlinked before the retitle", wrong)
	}
	victim := publishJSON(t, s1, other.Token, map[string]any{"content": "Another account's note."})
	s2.Do(t, testkit.Request{Method: "GET", Path: "/s/" + victim}).Expect(t, 200, "")

	// Count the invalidation messages that name the author or a linking note.
	opt, err := redis.ParseURL(b.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	sub := rdb.Subscribe(context.Background(), b.RedisPrefix+"changes")
	defer sub.Close()
	if _, err := sub.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	var authorMessages, linkerMessages atomic.Int64
	go func() {
		for m := range sub.Channel() {
			if strings.Contains(m.Payload, author.UserCUID) {
				authorMessages.Add(1)
			}
			if strings.Contains(m.Payload, cuids[linkers/2]) {
				linkerMessages.Add(1)
			}
		}
	}()
	renders := metric(t, s1, `sharenote_note_renders_total{cause="background",outcome="final"}`)

	began := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() {
		s1.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: other.Token, JSON: map[string]string{"cuid": victim}}).Expect(t, 200, "")
		within(t, time.Now(), time.Second, "another account's unshare on the second replica", func() bool {
			return s2.Do(t, testkit.Request{Method: "GET", Path: "/s/" + victim}).Status == http.StatusNotFound
		})
	})
	s1.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + target, Token: author.Token, JSON: map[string]any{"title": "New name"}}).Expect(t, 200, "")
	wg.Wait()
	time.Sleep(time.Second - time.Since(began))
	if wrong := pagesLacking(t, s2, cuids, linked); wrong != 0 {
		t.Errorf("%d of %d linking pages on the second replica do not lead to the retitled note a second after", wrong, linkers)
	}
	if n := authorMessages.Load(); n != 1 {
		t.Errorf("%d invalidation messages named the author, want 1", n)
	}
	if n := linkerMessages.Load(); n != 0 {
		t.Errorf("%d invalidation messages named a linking note, want none", n)
	}
	if n := metric(t, s1, `sharenote_note_renders_total{cause="background",outcome="final"}`); n != renders {
		t.Errorf("the retitle rendered %v notes, want none", n-renders)
	}
}

// Two quick retitles leave every linking note rendered and linked.
func TestTwoQuickRetitlesLeaveTheLinkingNotesLinked(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc := s.NewAccount(t, "writer")
		target := publishJSON(t, s, acc.Token, map[string]any{"title": "Target", "content": "The target."})
		var linkers []string
		for i := range 20 {
			linkers = append(linkers, publishJSON(t, s, acc.Token, map[string]any{"content": fmt.Sprintf("Note %d links to [[Target]].", i)}))
		}
		for _, title := range []string{"Elsewhere", "Target"} {
			s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + target, Token: acc.Token, JSON: map[string]any{"title": title}}).Expect(t, 200, "")
		}
		linked := `<a class="wikilink" href="` + s.URL + "/s/" + target + `">Target</a>`
		for _, id := range linkers {
			if page := string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + id}).Expect(t, 200, "").Body); !strings.Contains(page, linked) {
				t.Errorf("linking page %s lacks %q:\n%.600s", id, linked, page)
			}
			if v, html := storedRender(t, b, id); v != render.Version || strings.HasPrefix(html, "<pre>") {
				t.Errorf("linking note %s stored render: version %d, html %.80q", id, v, html)
			}
		}
	})
}

// copyNote makes n-1 copies of the publication cuid, titled title, with its rows of the
// link index, by SQL, and returns the cuids of the n publications titled title.
func copyNote(t testing.TB, gdb *gorm.DB, cuid, title string, n int) []string {
	t.Helper()
	if err := gdb.Exec(`INSERT INTO publications (cuid, account_cuid, title, summary, content, properties, show_properties, expires_at,
		unpublished, next_version, created_ms, created_at, updated_at, html, render_version, render_id, render_links, etag, names_version)
		SELECT 'z' || substr(md5(random()::text || g), 1, 23), account_cuid, title, summary, content, properties, show_properties, expires_at,
		unpublished, next_version, created_ms, created_at, updated_at, html, render_version, render_id, render_links, etag, names_version
		FROM publications, generate_series(2, ?) AS g WHERE cuid = ?`, n, cuid).Error; err != nil {
		t.Fatal(err)
	}
	if err := gdb.Exec(`INSERT INTO note_names (publication_cuid, account_cuid, kind, key, path, created_ms, expires_at)
		SELECT p.cuid, n.account_cuid, n.kind, n.key, n.path, n.created_ms, n.expires_at FROM publications p JOIN note_names n ON n.publication_cuid = ?
		WHERE p.title = ? AND p.cuid <> ?`, cuid, title, cuid).Error; err != nil {
		t.Fatal(err)
	}
	var cuids []string
	if err := gdb.Raw("SELECT cuid FROM publications WHERE title = ?", title).Scan(&cuids).Error; err != nil || len(cuids) != n {
		t.Fatalf("%d copies of %s (%v)", len(cuids), title, err)
	}
	return cuids
}

// pagesLacking reads the pages of cuids from s, 8 at a time, each from an address of its
// own, and returns how many lack want.
func pagesLacking(t testing.TB, s *testkit.Server, cuids []string, want string) int {
	var n atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < len(cuids); i += 8 {
				from := map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.%d.%d", i/256, i%256)}
				if !strings.Contains(string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + cuids[i], Header: from}).Expect(t, 200, "").Body), want) {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(n.Load())
}
