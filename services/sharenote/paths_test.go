package sharenote_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit"
)

// A path is checked in every body that carries it, and is unique per account among the
// publications that are not unshared; a taken path names its holder.
func TestPathsAreCheckedAndUniquePerAccount(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc, other := s.NewAccount(t, "writer"), s.NewAccount(t, "other")
		for _, bad := range []string{"", "Note", "Note.txt", "/Root/Note.md", "A//Note.md", "A/./Note.md", "A/../Note.md",
			"../Note.md", `A\Note.md`, "A/No\x01te.md", "A/No\u202ete.md", "A/No\u0085te.md", strings.Repeat("a/", 512) + "x.md"} {
			s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token,
				JSON: map[string]any{"content": "x", "path": bad}}).Expect(t, 400, "invalid_field")
			if bad != "" { // An empty header is no header.
				s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token, Body: []byte("x"), ContentType: "text/markdown",
					Header: map[string]string{"X-Path": url.PathEscape(bad)}}).Expect(t, 400, "invalid_field")
			}
		}

		holder := publishJSON(t, s, acc.Token, map[string]any{"content": "x", "path": "Garden/Plan.md"})
		var taken struct{ Error, Message, Cuid string }
		s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token,
			JSON: map[string]any{"content": "y", "path": "GARDEN/plan.md"}}).Expect(t, 400, "invalid_field").Decode(t, &taken)
		if taken.Cuid != holder {
			t.Errorf("a taken path (by match key) answered %+v, want the holder's cuid %s", taken, holder)
		}
		// With images too: the images are not kept, nor counted.
		s.Do(t, imagesRequest(acc.Token, map[string]string{"content": "![[one.png]]", "path": "garden/PLAN.md"})).
			Expect(t, 400, "invalid_field").Decode(t, &taken)
		if taken.Cuid != holder {
			t.Errorf("a taken path in a multipart publish answered %+v, want the holder's cuid %s", taken, holder)
		}
		if used := imageBytesUsed(t, s, acc.Token); used != 0 {
			t.Errorf("image_bytes_used = %v after a publish refused for its path, want 0", used)
		}
		// Multipart publishes racing for one path: one takes it, and each other is told
		// which note did, and keeps no image.
		racer := s.NewAccount(t, "racer")
		for round := range 4 {
			path := fmt.Sprintf("Race/%d.md", round)
			answers := make([]*testkit.Response, 4)
			var wg sync.WaitGroup
			for i := range answers {
				wg.Go(func() {
					answers[i] = s.Do(t, imagesRequest(racer.Token, map[string]string{"content": "x", "path": path}))
				})
			}
			wg.Wait()
			var winner struct{ CUID string }
			for _, a := range answers {
				if a.Status == 200 {
					if winner.CUID != "" {
						t.Fatalf("%s was published twice", path)
					}
					a.Decode(t, &winner)
				}
			}
			for _, a := range answers {
				if a.Status != 200 {
					a.Expect(t, 400, "invalid_field").Decode(t, &taken)
					if taken.Cuid != winner.CUID {
						t.Errorf("a publish that lost the race for %s answered %s, want the winner %s", path, a.Body, winner.CUID)
					}
				}
			}
		}
		if used := imageBytesUsed(t, s, racer.Token); used != 4*(108+56) {
			t.Errorf("image_bytes_used = %v after the races, want %v (the winners' images alone)", used, 4*(108+56))
		}
		// And PATCHes moving notes to one path at once.
		movers := make([]string, 4)
		for i := range movers {
			movers[i] = publishJSON(t, s, racer.Token, map[string]any{"content": "x", "path": fmt.Sprintf("Movers/%d.md", i)})
		}
		answers := make([]*testkit.Response, len(movers))
		var wg sync.WaitGroup
		for i, cuid := range movers {
			wg.Go(func() {
				answers[i] = s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + cuid, Token: racer.Token, JSON: map[string]any{"path": "Moved.md"}})
			})
		}
		wg.Wait()
		var moved string
		for i, a := range answers {
			if a.Status == 200 {
				if moved != "" {
					t.Fatalf("two notes moved to one path")
				}
				moved = movers[i]
			}
		}
		for _, a := range answers {
			if a.Status != 200 {
				a.Expect(t, 400, "invalid_field").Decode(t, &taken)
				if taken.Cuid != moved {
					t.Errorf("a PATCH that lost the race for a path answered %s, want the winner %s", a.Body, moved)
				}
			}
		}
		second := publishJSON(t, s, acc.Token, map[string]any{"content": "y", "path": "Garden/Other.md"})
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + second, Token: acc.Token,
			JSON: map[string]any{"path": "Garden/Plan.md"}}).Expect(t, 400, "invalid_field").Decode(t, &taken)
		if taken.Cuid != holder {
			t.Errorf("a PATCH to a taken path answered %+v, want the holder's cuid %s", taken, holder)
		}
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + second, Token: acc.Token,
			JSON: map[string]any{"path": "Garden/../Plan.md"}}).Expect(t, 400, "invalid_field")
		// Another account may have the same path; an unshared note frees its path.
		publishJSON(t, s, other.Token, map[string]any{"content": "z", "path": "Garden/Plan.md"})
		s.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]string{"cuid": holder}}).Expect(t, 200, "")
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + second, Token: acc.Token,
			JSON: map[string]any{"path": "Garden/Plan.md"}}).Expect(t, 200, "")

		// A version keeps the path its note had then.
		var v struct{ Path *string }
		s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + second + "/versions/1", Token: acc.Token}).Expect(t, 200, "").Decode(t, &v)
		if v.Path == nil || *v.Path != "Garden/Other.md" {
			t.Errorf("version 1's path %v, want Garden/Other.md (before the move)", v.Path)
		}

		// The owner sees the path and a title from it; the public sees the title only.
		var owner struct {
			Title, Path *string
		}
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + second, Token: acc.Token,
			JSON: map[string]any{"title": nil}}).Expect(t, 200, "").Decode(t, &owner)
		if owner.Title == nil || *owner.Title != "Plan" || owner.Path == nil || *owner.Path != "Garden/Plan.md" {
			t.Errorf("owner view title %v path %v, want Plan and Garden/Plan.md", owner.Title, owner.Path)
		}
		for _, read := range []string{"/api/notes/" + second, "/s/" + second} {
			body := string(s.Do(t, testkit.Request{Method: "GET", Path: read}).Expect(t, 200, "").Body)
			if !strings.Contains(body, "Plan") || strings.Contains(body, "Garden") {
				t.Errorf("%s shows the path or lacks the title from it:\n%s", read, body)
			}
		}
		md := s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token, Body: []byte("x"), ContentType: "text/markdown",
			Header: map[string]string{"X-Path": url.PathEscape("Ünï côde/Ideas.md")}}).Expect(t, 200, "")
		var created struct{ Cuid string }
		md.Decode(t, &created)
		var list struct {
			Notes []struct{ Cuid, Title, Path string }
		}
		s.Do(t, testkit.Request{Method: "GET", Path: "/api/user/notes", Token: acc.Token}).Expect(t, 200, "").Decode(t, &list)
		listed := 0
		for _, n := range list.Notes {
			if n.Cuid == created.Cuid {
				listed++
				if n.Path != "Ünï côde/Ideas.md" || n.Title != "Ideas" {
					t.Errorf("listed %+v, want the X-Path note titled Ideas", n)
				}
			}
		}
		if listed != 1 {
			t.Errorf("the X-Path note is listed %d times", listed)
		}
	})
}

// Links resolve among the author's own notes as a vault does: by path (relative to the
// linking note, then from the root), by base name (same folder first, then the shortest
// path), by alias, in any case and Unicode form, with anchors; another author's note of
// the same name never.
func TestLinksResolveAsInTheVault(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc, other := s.NewAccount(t, "writer"), s.NewAccount(t, "other")
		publishJSON(t, s, other.Token, map[string]any{"content": "not yours", "path": "Elsewhere.md"})
		deep := publishJSON(t, s, acc.Token, map[string]any{"content": "# Top\n## Señal\ndeep", "path": "A/B/Plan.md"})
		shallow := publishJSON(t, s, acc.Token, map[string]any{"content": "shallow", "path": "C/Plan.md"})
		near := publishJSON(t, s, acc.Token, map[string]any{"content": "near", "path": "A/B/Near.md"})
		alias := publishJSON(t, s, acc.Token, map[string]any{"content": "---\naliases: [Nick, Other]\n---\naliased", "path": "Z/Named.md"})
		nfd := publishJSON(t, s, acc.Token, map[string]any{"content": "nfd", "path": "Cafe\u0301.md"})
		linker := publishJSON(t, s, acc.Token, map[string]any{"path": "A/B/Linker.md", "content": "[[Plan]] [[C/Plan|root path]] " +
			"[[near]] [[../B/Near|relative]] [[nick]] [[Café]] [[Plan#señal|anchored]] [[Elsewhere]] [md](Near.md)"})
		page := string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + linker}).Expect(t, 200, "").Body)
		href := func(cuid string) string { return `href="` + s.URL + "/s/" + cuid }
		for _, want := range []string{
			href(deep) + `">Plan</a>`, href(shallow) + `">root path</a>`, href(near) + `">near</a>`, href(near) + `">relative</a>`,
			href(alias) + `">nick</a>`, href(nfd) + `">Café</a>`, href(deep) + `#`, `">anchored</a>`, href(near) + `">md</a>`,
			`<span class="wikilink unresolved">Elsewhere</span>`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("page lacks %q:\n%s", want, page)
			}
		}
		// The anchor of [[Plan#señal]] exists on the deep page.
		i := strings.Index(page, href(deep)+"#")
		anchor := page[i+len(href(deep))+1:]
		anchor, err := url.PathUnescape(anchor[:strings.IndexByte(anchor, '"')])
		if err != nil {
			t.Fatal(err)
		}
		if target := string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + deep}).Expect(t, 200, "").Body); !strings.Contains(target, `id="`+anchor+`"`) {
			t.Errorf("anchor %q is not an id of the target page", anchor)
		}
	})
}

// A link that named no note works on a second replica within a second of the note it names
// being published on the first, and a moved note's links follow its new path; the linking
// note is not rendered again for either.
func TestANewNoteMakesLinksWorkOnEveryReplica(t *testing.T) {
	b := testkit.PostgresBackend(t)
	s1, s2 := start(t, b), start(t, b)
	acc := s1.NewAccount(t, "writer")
	linker := publishJSON(t, s1, acc.Token, map[string]any{"path": "Home.md", "content": "[[Ideas/Later]] and [[Later|later]]"})
	page := func() string {
		return string(s2.Do(t, testkit.Request{Method: "GET", Path: "/s/" + linker}).Expect(t, 200, "").Body)
	}
	if p := page(); !strings.Contains(p, `<span class="wikilink unresolved">Ideas/Later</span>`) {
		t.Fatalf("before the note exists the link should be text:\n%s", p)
	}
	began := time.Now()
	later := publishJSON(t, s1, acc.Token, map[string]any{"path": "Ideas/Later.md", "content": "Soon."})
	linked := `href="` + s2.URL + "/s/" + later + `">Ideas/Later</a>`
	took := within(t, began, time.Second, "a new note's links on the second replica", func() bool { return strings.Contains(page(), linked) })
	t.Logf("a new note's links work on the second replica after %v", took.Round(time.Millisecond))

	// Moved out of Ideas/: the folder path leads nowhere, the base name still leads there.
	began = time.Now()
	s1.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + later, Token: acc.Token, JSON: map[string]any{"path": "Archive/Later.md"}}).Expect(t, 200, "")
	within(t, began, time.Second, "a move on the second replica", func() bool {
		p := page()
		return strings.Contains(p, `<span class="wikilink unresolved">Ideas/Later</span>`) && strings.Contains(p, `/s/`+later+`">later</a>`)
	})
}
