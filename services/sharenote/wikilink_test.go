package sharenote_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit"
)

// A wikilink leads to the author's active publication of its title, resolved when the
// page is built: after publishing, retitling and unsharing that publication the linking
// page follows at once, without rendering the linking note again.
func TestWikilinksFollowTheNotesTheyName(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc, other := s.NewAccount(t, "writer"), s.NewAccount(t, "other")
		// Another author's note of the title is not the author's: it never resolves.
		publishJSON(t, s, other.Token, map[string]any{"title": "Target", "content": "Not yours."})

		var linker struct {
			CUID, ETag string
			Warnings   []struct{ Code, Ref string }
		}
		s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token,
			JSON: map[string]any{"content": "See [[Target]], [[Target|the target]] and ![[photo.png]]."}}).Expect(t, 200, "").Decode(t, &linker)
		if w := linker.Warnings; len(w) != 2 || w[0].Code != "unresolved_reference" || w[1].Code != "unknown_note_link" || w[1].Ref != "Target" {
			t.Errorf("warnings %+v, want unresolved_reference for the image and one unknown_note_link for Target", w)
		}

		unresolved := `See <span class="wikilink unresolved">Target</span>, <span class="wikilink unresolved">the target</span>`
		page := s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + linker.CUID}).Expect(t, 200, "")
		if !strings.Contains(string(page.Body), unresolved) {
			t.Fatalf("page before the target exists lacks %q:\n%s", unresolved, page.Body)
		}
		lastTag := page.Header.Get("ETag")
		follows := func(step, want string) {
			t.Helper()
			began := time.Now()
			for {
				page := s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + linker.CUID}).Expect(t, 200, "")
				if strings.Contains(string(page.Body), want) {
					if tag := page.Header.Get("ETag"); tag == lastTag {
						t.Errorf("%s: the page changed but kept its ETag %s", step, tag)
					} else {
						lastTag = tag
					}
					t.Logf("%s: the linking page followed in %v", step, time.Since(began).Round(time.Millisecond))
					return
				}
				if time.Since(began) > 5*time.Second {
					t.Fatalf("%s: the linking page did not follow within 5 s; want %q in:\n%s", step, want, page.Body)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}

		target := publishJSON(t, s, acc.Token, map[string]any{"title": "Target", "content": "Here."})
		linked := `See <a class="wikilink" href="` + s.URL + "/s/" + target + `">Target</a>, <a class="wikilink" href="` +
			s.URL + "/s/" + target + `">the target</a>`
		follows("publish", linked)

		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + target, Token: acc.Token, JSON: map[string]any{"title": "Renamed"}}).Expect(t, 200, "")
		follows("retitle", unresolved)
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + target, Token: acc.Token, JSON: map[string]any{"title": "Target"}}).Expect(t, 200, "")
		follows("title back", linked)

		s.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]string{"cuid": target}}).Expect(t, 200, "")
		follows("unshare", unresolved)

		// A target that expires by the clock: nothing changes then, yet the linking page
		// must not lead to it afterwards, nor be cached past that moment.
		expires := s.Clock.Now().Add(30 * time.Second)
		brief := publishJSON(t, s, acc.Token, map[string]any{"title": "Target", "content": "Briefly.",
			"expires_at": expires.Format(time.RFC3339Nano)})
		follows("publish of an expiring note", `See <a class="wikilink" href="`+s.URL+"/s/"+brief+`"`)
		page = s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + linker.CUID}).Expect(t, 200, "")
		if age, left := page.MaxAge(t), expires.Sub(s.Clock.Now()); age > left {
			t.Errorf("linking page's max-age %v outlives the linked note's expiry in %v", age, left)
		}
		s.Clock.Advance(30 * time.Second)
		follows("expiry", unresolved)

		// A PATCH warns as a publish does. Its render resolves the wikilinks within the
		// update's transaction: on SQLite's one connection a query outside it waited for
		// the render's deadline, and the note was shown whole as text.
		var patched struct {
			Warnings []struct{ Code, Ref, Message string }
		}
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + brief, Token: acc.Token,
			JSON: map[string]any{"content": "[[Nowhere]] and $\\frac{$"}}).Expect(t, 200, "").Decode(t, &patched)
		got := map[string]string{}
		for _, w := range patched.Warnings {
			got[w.Ref] = w.Code
		}
		if want := map[string]string{"Nowhere": "unknown_note_link", `$\frac{$`: "render_fallback"}; len(patched.Warnings) != 2 || !maps.Equal(got, want) {
			t.Errorf("PATCH warnings %+v, want %v", patched.Warnings, want)
		}

		// The re-renders changed the page, never the linking publication's etag.
		var listed struct{ Notes []struct{ CUID, ETag string } }
		s.Do(t, testkit.Request{Method: "GET", Path: "/api/user/notes", Token: acc.Token}).Expect(t, 200, "").Decode(t, &listed)
		for _, n := range listed.Notes {
			if n.CUID == linker.CUID && n.ETag != linker.ETag {
				t.Errorf("linking note's etag went from %s to %s", linker.ETag, n.ETag)
			}
		}
	})
}
