//go:build loadbench

package sharenote_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
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

// benchEmbeds builds, through the note core on Postgres with nothing cached, the page of
// a note that embeds one 10 KB section of each of 50 notes, and the page of a note with
// the same sections inline, and reports the time per build of the one over the other.
// The embedded notes have a second section each, which the embeds cut away.
func benchEmbeds(t *testing.T, cfg benchConfig, rep *report) {
	s, _ := startLoadServer(t)
	acc := s.NewAccount(t, "vault")
	notes := s.App.Deps().Notes
	ctx := context.Background()
	publish := func(path, content string) string {
		p, err := notes.Publish(ctx, acc.UserCUID, note.Draft{Content: content, Path: &path, ShowProperties: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Warnings) > 0 {
			t.Fatalf("%s: %+v", path, p.Warnings)
		}
		return p.CUID
	}
	var embeds, inline strings.Builder
	for k := range 50 {
		publish(fmt.Sprintf("Parts/Note %d.md", k), embedSection(k)+embedSection(k+100))
		fmt.Fprintf(&embeds, "![[Note %d#Part %d]]\n\n", k, k)
		inline.WriteString(embedSection(k))
	}
	withEmbeds, withInline := publish("Embeds.md", embeds.String()), publish("Inline.md", inline.String())
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
	notes := s1.App.Deps().Notes
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
