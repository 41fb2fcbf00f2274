package notes_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestIfMatchProtectsFromStaleUpdates(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(f.acc, note.Draft{Content: "v1"})
		etag := func() string {
			var body struct{ Notes []struct{ CUID, ETag string } }
			f.get("/api/user/notes", f.acc.Token).Expect(t, 200, "").Decode(t, &body)
			for _, n := range body.Notes {
				if n.CUID == id {
					return n.ETag
				}
			}
			t.Fatal("the note is not listed")
			return ""
		}
		patch := func(ifMatch string, content string) *testkit.Response {
			return f.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: f.acc.Token,
				Header: map[string]string{"If-Match": ifMatch}, JSON: map[string]any{"content": content}})
		}
		first := etag()

		var changed struct{ ETag string }
		resp := patch(`"`+first+`"`, "v2").Expect(t, 200, "")
		resp.Decode(t, &changed)
		if changed.ETag == first || resp.Header.Get("ETag") != `"`+changed.ETag+`"` || etag() != changed.ETag {
			t.Errorf("etag after a change: body %q, header %q, list %q; was %q", changed.ETag, resp.Header.Get("ETag"), etag(), first)
		}
		patch(first, "v3").Expect(t, http.StatusPreconditionFailed, "precondition_failed")
		if c := f.get("/api/notes/"+id, "").Expect(t, 200, ""); !containsJSON(c.Body, `"content":"v2"`) {
			t.Errorf("a refused update changed the note: %s", c.Body)
		}
		patch(changed.ETag, "v3").Expect(t, 200, "") // Bare, as the JSON gives it.
		patch("*", "v4").Expect(t, 200, "")
		patch(`"stale", "`+etag()+`"`, "v5").Expect(t, 200, "") // One of a list.

		// Settings changes do not change a publication's etag.
		before := etag()
		f.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: f.acc.Token, JSON: map[string]any{"theme": "dark"}}).Expect(t, 200, "")
		if etag() != before {
			t.Error("a settings change changed the publication's etag")
		}

		// Of concurrent updates with the same If-Match, exactly one wins.
		current := etag()
		statuses := make([]int, 8)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() { statuses[i] = patch(current, "race").Status })
		}
		wg.Wait()
		won := 0
		for _, s := range statuses {
			switch s {
			case 200:
				won++
			case http.StatusPreconditionFailed:
			default:
				t.Errorf("concurrent update: status %d", s)
			}
		}
		if won != 1 {
			t.Errorf("%d of %d concurrent updates with one If-Match won, want exactly 1", won, len(statuses))
		}
	})
}

func containsJSON(body []byte, fragment string) bool { return strings.Contains(string(body), fragment) }
