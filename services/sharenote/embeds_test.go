package sharenote_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit"
)

// embedSource is a note whose parts the tests embed.
const embedSource = "# Source\n\nIntro words ^intro\n\n## Part one\n\nWords of part one.\n\n### Sub\n\nSub words.\n\n" +
	"## Part two\n\nWords of part two.\n"

// frames are the embeds of a page: the text from each frame's start to the next's.
func frames(page string) []string {
	parts := strings.Split(page, `<div class="embed">`)
	return parts[1:]
}

// publishWarned publishes a note over HTTP and returns its cuid and its warnings' refs by code.
func publishWarned(t *testing.T, s *testkit.Server, token string, body map[string]any) (string, map[string][]string) {
	t.Helper()
	var created struct {
		CUID     string
		Warnings []struct{ Code, Ref string }
	}
	s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: token, JSON: body}).Expect(t, http.StatusOK, "").Decode(t, &created)
	refs := map[string][]string{}
	for _, w := range created.Warnings {
		refs[w.Code] = append(refs[w.Code], w.Ref)
	}
	return created.CUID, refs
}

var ids = regexp.MustCompile(` id="([^"]*)"`)

// Each kind of embed shows its part of the note inside a frame titled by the note (never
// its path) that links to it; the ids of the page stay unique; a missing part, another
// author's note and a title written as HTML show as they must.
func TestEmbedsShowTheirPartsFramed(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc, other := s.NewAccount(t, "writer"), s.NewAccount(t, "other")
		publishJSON(t, s, other.Token, map[string]any{"content": "secret words", "path": "Elsewhere.md"})
		source := publishJSON(t, s, acc.Token, map[string]any{"content": embedSource, "path": "Hidden folder/Source.md"})
		publishJSON(t, s, acc.Token, map[string]any{"content": "html words", "path": "Titled.md", "title": `"><img src=x onerror=alert(1)>`})
		page, warned := publishWarned(t, s, acc.Token, map[string]any{"path": "Page.md", "content": "# Page\n\n## Part one\n\n" +
			"![[Source]]\n\n![[Source#Part one]]\n\n![[Source#^intro]]\n\n![[Source#Nope]]\n\n![[Elsewhere]]\n\n![[Titled]]\n"})
		if got := strings.Join(warned["unknown_note_link"], " "); got != "Elsewhere Source#Nope" {
			t.Errorf("unknown_note_link warnings %q, want the missing heading and the other author's note", got)
		}
		html := string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + page}).Expect(t, 200, "").Body)
		f := frames(html)
		if len(f) != 4 {
			t.Fatalf("%d frames, want 4 (note, heading, block, HTML title):\n%s", len(f), html)
		}
		title := `<p class="embed-title"><a class="wikilink" href="` + s.URL + "/s/" + source
		for i, c := range []struct{ has, lacks []string }{
			{[]string{title + `">Source</a>`, "Intro words", "Words of part one.", "Sub words.", "Words of part two."}, nil},
			{[]string{title + `#n-part-one">Source</a>`, "Words of part one.", "Sub words."}, []string{"Intro words", "Words of part two."}},
			{[]string{title + `#%5Eintro">Source</a>`, "Intro words"}, []string{"Words of part one."}},
			{[]string{`>&#34;&gt;&lt;img src=x onerror=alert(1)&gt;</a>`, "html words"}, nil},
		} {
			for _, want := range c.has {
				if !strings.Contains(f[i], want) {
					t.Errorf("frame %d lacks %q:\n%s", i, want, f[i])
				}
			}
			for _, bad := range c.lacks {
				if strings.Contains(f[i], bad) {
					t.Errorf("frame %d shows %q:\n%s", i, bad, f[i])
				}
			}
		}
		for _, bad := range []string{"secret words", "Hidden folder", "<img src=x"} {
			if strings.Contains(html, bad) {
				t.Errorf("the page shows %q", bad)
			}
		}
		if !strings.Contains(f[2], `href="`+s.URL+"/s/"+source+`">Source &gt; Nope</a>`) || !strings.Contains(html, "Elsewhere</span>") {
			t.Errorf("a missing heading should be a link and another author's note text:\n%s", html)
		}
		seen := map[string]bool{}
		for _, m := range ids.FindAllStringSubmatch(html, -1) {
			if seen[m[1]] {
				t.Errorf("id %q is not unique in the page", m[1])
			}
			seen[m[1]] = true
		}
		for _, id := range []string{"n-part-one", "e1-n-part-one", "e2-n-part-one", "e1-^intro", "e3-^intro"} {
			if !seen[id] {
				t.Errorf("the page lacks id %q; it has %v", id, seen)
			}
		}
	})
}

// An embed cycle shows the note that closes it as a link; a bomb of three levels of 20
// embeds each stays within the page cap, its fourth level shown as links.
func TestEmbedCyclesAndBombsAreBounded(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc := s.NewAccount(t, "writer")
		one := publishJSON(t, s, acc.Token, map[string]any{"path": "One.md", "content": "one words ![[Two]]"})
		publishJSON(t, s, acc.Token, map[string]any{"path": "Two.md", "content": "two words\n\n![[One]]\n"})
		html := string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + one}).Expect(t, 200, "").Body)
		if f := frames(html); len(f) != 1 || !strings.Contains(f[0], "two words") ||
			!strings.Contains(f[0], `<a class="wikilink" href="`+s.URL+"/s/"+one+`">One</a>`) {
			t.Errorf("a cycle: want Two framed once with a link back to One:\n%s", html)
		}

		deepest := publishJSON(t, s, acc.Token, map[string]any{"path": "Deepest.md", "content": "deepest words"})
		// 100 KB of text in the third level: 8,000 copies would be 800 MB.
		publishJSON(t, s, acc.Token, map[string]any{"path": "C.md", "content": strings.Repeat("bomb words ", 9000) + "\n\n![[Deepest]]\n"})
		publishJSON(t, s, acc.Token, map[string]any{"path": "B.md", "content": strings.Repeat("![[C]]\n\n", 20)})
		publishJSON(t, s, acc.Token, map[string]any{"path": "A.md", "content": strings.Repeat("![[B]]\n\n", 20)})
		bomb := publishJSON(t, s, acc.Token, map[string]any{"path": "Bomb.md", "content": strings.Repeat("![[A]]\n\n", 20)})
		began := time.Now()
		resp := s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + bomb}).Expect(t, 200, "")
		took := time.Since(began)
		html = string(resp.Body)
		if len(html) > 12<<20 {
			t.Errorf("the bomb's page is %d bytes, over the 12 MiB cap", len(html))
		}
		if strings.Contains(html, "deepest words") || !strings.Contains(html, `href="`+s.URL+"/s/"+deepest+`">Deepest</a>`) {
			t.Errorf("the fourth level should be a link")
		}
		if n := strings.Count(html, "bomb words"); n < 9000 || n > 9000*60 {
			t.Errorf("the bomb shows %d copies' worth of words: want some, within the allowance", n/9000)
		}
		t.Logf("a bomb's page: %d bytes, %d frames, in %v", len(html), len(frames(html)), took.Round(time.Millisecond))
	})
}

// A change of an embedded note (PATCH, unshare, expiry) reaches every page that embeds
// it on a second replica within a second, and a page's max-age never runs past an
// embedded note's expiry.
func TestAnEmbeddedNoteChangeReachesEveryReplica(t *testing.T) {
	b := testkit.PostgresBackend(t)
	clock := testkit.NewClock()
	s1, s2 := start(t, b, testkit.WithClock(clock)), start(t, b, testkit.WithClock(clock))
	awaitTrust(t, s2)
	acc := s1.NewAccount(t, "writer")
	source := publishJSON(t, s1, acc.Token, map[string]any{"path": "Source.md", "content": "first words"})
	var pages []string
	for i := range 3 {
		pages = append(pages, publishJSON(t, s1, acc.Token, map[string]any{"path": fmt.Sprintf("Page %d.md", i), "content": "![[Source]]"}))
	}
	shows := func(words string) func() bool {
		return func() bool {
			for _, p := range pages {
				if !strings.Contains(string(s2.Do(t, testkit.Request{Method: "GET", Path: "/s/" + p}).Expect(t, 200, "").Body), words) {
					return false
				}
			}
			return true
		}
	}
	within(t, time.Now(), time.Second, "the embed on the second replica", shows("first words"))

	began := time.Now()
	s1.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + source, Token: acc.Token, JSON: map[string]any{"content": "second words"}}).Expect(t, 200, "")
	took := within(t, began, time.Second, "a PATCH of an embedded note on the second replica", shows("second words"))
	t.Logf("a PATCH reached every embedding page on the second replica after %v", took.Round(time.Millisecond))

	began = time.Now()
	s1.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]string{"cuid": source}}).Expect(t, 200, "")
	within(t, began, time.Second, "an unshare of an embedded note on the second replica", func() bool {
		return !shows("second words")() && shows(`<span class="wikilink unresolved">Source</span>`)()
	})

	expires := clock.Now().Add(30 * time.Second)
	publishJSON(t, s1, acc.Token, map[string]any{"path": "Brief.md", "content": "brief words", "expires_at": expires.Format(time.RFC3339Nano)})
	page := publishJSON(t, s1, acc.Token, map[string]any{"path": "Embedder.md", "content": "![[Brief]]"})
	resp := s2.Do(t, testkit.Request{Method: "GET", Path: "/s/" + page}).Expect(t, 200, "")
	maxAge, err := strconv.Atoi(strings.TrimPrefix(resp.Header.Get("Cache-Control"), "public, max-age="))
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(string(resp.Body), "brief words") || err != nil || maxAge > 30 || maxAge < 25 {
		t.Errorf("Cache-Control %q, want a max-age of the 30 s left before the embedded note expires (and the embed)", cc)
	}
	clock.Advance(30 * time.Second)
	within(t, time.Now(), time.Second, "an expired embedded note on the second replica", func() bool {
		return !strings.Contains(string(s2.Do(t, testkit.Request{Method: "GET", Path: "/s/" + page}).Expect(t, 200, "").Body), "brief words")
	})
}
