//go:build loadbench

package sharenote_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/testkit/load"
	"github.com/sharenote/sharenote/services/sharenote"
)

// embedSection is a section of about 10 KB of Markdown under the heading "Part k".
func embedSection(k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Part %d\n\n", k)
	for b.Len() < 10_000 {
		fmt.Fprintf(&b, "Paragraph of part %d: *trams*, **hills** and `code`, with a [link](https://example.com/%d).\n\n", k, b.Len())
	}
	return b.String()
}

// publisher makes an account of s and returns it with a function that publishes a note
// at a path as that account, through s's note core, and returns its cuid; a warning fails
// the test.
func publisher(t *testing.T, s *testkit.Server) (testkit.Account, func(path, content string) string) {
	acc := s.NewAccount(t, "vault")
	return acc, func(path, content string) string {
		t.Helper()
		p, err := testkit.Must(s.App.Deps().Publisher()).Publish(context.Background(), acc.UserCUID, note.Draft{Content: content, Path: &path, ShowProperties: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Warnings) > 0 {
			t.Fatalf("%s: %+v", path, p.Warnings)
		}
		return p.CUID
	}
}

// benchEmbeds builds, through the note core on Postgres with nothing cached, the page of
// a note that embeds one 10 KB section of each of 50 notes, and the page of a note with
// the same sections inline, and reports the time per build of the one over the other.
// The embedded notes have a second section each, which the embeds cut away.
func benchEmbeds(t *testing.T, cfg benchConfig, rep *report) {
	s, _ := startLoadServer(t)
	_, publish := publisher(t, s)
	var embeds, inline strings.Builder
	for k := range 50 {
		publish(fmt.Sprintf("Parts/Note %d.md", k), embedSection(k)+embedSection(k+100))
		fmt.Fprintf(&embeds, "![[Note %d#Part %d]]\n\n", k, k)
		inline.WriteString(embedSection(k))
	}
	withEmbeds, withInline := publish("Embeds.md", embeds.String()), publish("Inline.md", inline.String())
	notes, ctx := testkit.Must(s.App.Deps().Reader()), context.Background()
	build := func(cuid string) (time.Duration, int) {
		start, n, size := time.Now(), 0, 0
		for ; time.Since(start) < cfg.duration; n++ {
			v, err := notes.ReadPage(ctx, cuid)
			if err != nil {
				t.Fatal(err)
			}
			size = len(v.HTML)
		}
		return time.Since(start) / time.Duration(n), size
	}
	build(withEmbeds) // warm-up
	inlined, inlineSize := build(withInline)
	embedded, embedSize := build(withEmbeds)
	if embedSize < inlineSize {
		t.Fatalf("the embeds' page is %d bytes, the inline one %d: the embeds are not all shown", embedSize, inlineSize)
	}
	rep.add(row{name: "page build, 50 embeds of 10 KB sections", latencyOnly: true, ratio: ratio(float64(embedded), float64(inlined)),
		goal: ptr(atMost(3, "× inline"))})
	rep.note("page build with embeds: %v per build (ReadPage, nothing cached) of a page of 50 embedded 10 KB sections (%s), %v of the same sections inline (%s)",
		embedded.Round(time.Microsecond), byteSize(embedSize), inlined.Round(time.Microsecond), byteSize(inlineSize))
}

// benchEmbedUnshare unshares, on one replica, a note that 100 pages embed, after a second
// replica has cached those pages, and reports the time until the second replica serves
// none of them with the note's content.
func benchEmbedUnshare(t *testing.T, _ benchConfig, rep *report) {
	s1, b := startLoadServer(t)
	s2 := testkit.StartServer(t, b, sharenote.Program.Targets)
	awaitTrust(t, s2)
	acc := s1.NewAccount(t, "vault")
	notes := testkit.Must(s1.App.Deps().Publisher())
	ctx := context.Background()
	path := "Shared.md"
	shared, err := notes.Publish(ctx, acc.UserCUID, note.Draft{Content: "shared words", Path: &path})
	if err != nil {
		t.Fatal(err)
	}
	pages := make([]string, 100)
	for i := range pages {
		p, err := notes.Publish(ctx, acc.UserCUID, note.Draft{Content: fmt.Sprintf("page %d\n\n![[Shared]]\n", i)})
		if err != nil {
			t.Fatal(err)
		}
		pages[i] = p.CUID
	}
	showing := func() int {
		n := 0
		for _, p := range pages {
			if strings.Contains(string(s2.Do(t, testkit.Request{Method: "GET", Path: "/s/" + p}).Expect(t, 200, "").Body), "shared words") {
				n++
			}
		}
		return n
	}
	if n := showing(); n != len(pages) {
		t.Fatalf("%d of %d pages show the embed on the second replica", n, len(pages))
	}
	began := time.Now()
	if err := notes.Unpublish(ctx, acc.UserCUID, shared.CUID); err != nil {
		t.Fatal(err)
	}
	took := within(t, began, time.Second, "an unshare on the second replica's 100 embedding pages", func() bool { return showing() == 0 })
	rep.add(row{name: "unshare of a note 100 pages embed, 2nd replica", latencyOnly: true, ratio: took.Seconds(),
		goal: ptr(atMost(1, "s"))})
	rep.note("embed unshare: every one of 100 embedding pages on a second replica without the note after %v", took.Round(time.Millisecond))
}

// benchEmbedChanges reads, with 8 clients that each read 10 times a second, a page that
// embeds the small first section of each of 20 notes of 1.8 MB while the first of them
// changes every 2 s, and an ordinary page (the same sections inline) under the same
// reads and changes, on the embedded default and on Postgres + Redis. It reports the CPU
// per read (the servers' process, Postgres and Redis) of the one over the other,
// measured in turns of 4 s: two changes in each. Paced readers, not a saturating loop:
// at saturation the cheap cached reads would dilute what the page's rebuilds cost.
func benchEmbedChanges(t *testing.T, cfg benchConfig, rep *report) {
	cfg.concurrency, cfg.pace, cfg.duration = 8, 100*time.Millisecond, max(4*cfg.duration, 12*time.Second)
	for _, b := range []struct {
		name    string
		backend func(*testing.T) testkit.Backend
	}{{"embedded default", testkit.SQLiteBackend}, {"Postgres + Redis", testkit.PostgresBackend}} {
		t.Run(b.name, func(t *testing.T) {
			s := startLoadServerOn(t, b.backend(t))
			acc, publish := publisher(t, s)
			var embeds, inline strings.Builder
			var changing string
			// The renders within the embed allowance are shown, smallest first: the first
			// note, a little smaller than the others, is among them.
			size := func(k int) int {
				if k == 0 {
					return 1_790_000
				}
				return 1_800_000
			}
			for k := range 20 {
				small := fmt.Sprintf("The small part of note %d.", k)
				id := publish(fmt.Sprintf("Big %d.md", k), load.Sectioned(small, size(k)))
				if k == 0 {
					changing = id
				}
				fmt.Fprintf(&embeds, "![[Big %d#Small]]\n\n", k)
				fmt.Fprintf(&inline, "## Small\n\n%s\n\n", small)
			}
			withEmbeds, ordinary := publish("Embeds.md", embeds.String()), publish("Ordinary.md", inline.String())
			page := s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + withEmbeds}).Expect(t, 200, "").Body
			if !bytes.Contains(page, []byte("The small part of note 0.")) {
				t.Fatalf("the page does not show its first embed:\n%s", page)
			}

			stop := make(chan struct{})
			var changes atomic.Int64
			var wg sync.WaitGroup
			defer func() { close(stop); wg.Wait() }()
			wg.Go(func() {
				tick := time.NewTicker(2 * time.Second)
				defer tick.Stop()
				for k := 1; ; k++ {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					content := load.Sectioned(fmt.Sprintf("Version %d of the small part of note 0.", k), size(0))
					if _, err := testkit.Must(s.App.Deps().Publisher()).Update(context.Background(), acc.UserCUID, changing, note.Patch{Content: &content}); err != nil {
						t.Errorf("change %d of the embedded note: %v", k, err)
					}
					changes.Add(1)
				}
			})
			rebuilds := metric(t, s, "sharenote_page_rebuilds_total")
			app, plain := compareInTurns(t, cfg, 4*time.Second, "page of large embeds that change, "+b.name,
				load.Target{URL: s.URL, Paths: []string{"/s/" + withEmbeds}}, load.Target{URL: s.URL, Paths: []string{"/s/" + ordinary}})
			rebuilds = metric(t, s, "sharenote_page_rebuilds_total") - rebuilds
			page = s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + withEmbeds}).Expect(t, 200, "").Body
			if !bytes.Contains(page, []byte("of the small part of note 0.")) || bytes.Contains(page, []byte("The small part of note 0.")) {
				t.Errorf("the page does not show the changed note:\n%s", page)
			}
			rep.add(row{name: "page of 20 embeds of 1.8 MB notes, one changing every 2 s, 8 readers at 10/s, " + b.name, app: app, bare: plain,
				ratio: ratio(float64(cpuPerRequest(app)), float64(cpuPerRequest(plain))), goal: ptr(atMost(2, "× CPU/req of an ordinary page"))})
			rep.note("large embeds that change, %s: %v of CPU per read of the page of 20 embeds (the servers' process, Postgres and Redis), %v per read of an ordinary page (its sections inline), 8 readers at 10 a second, the first embedded note changing every 2 s in both (%d changes made, a 1.8 MB render each, and %v page rebuilds in %v); the \"bare\" columns of its row are the ordinary page's",
				b.name, load.Round(cpuPerRequest(app)), load.Round(cpuPerRequest(plain)), changes.Load(), rebuilds, 2*cfg.duration)
		})
	}
}

// cpuPerRequest is what res cost per request in CPU time: the test process's, Postgres's
// and Redis's.
func cpuPerRequest(res load.Result) time.Duration {
	return res.CPUPerRequest() + watchedPerRequest(res)
}
