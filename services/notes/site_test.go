package notes_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/wire"
)

// TestSiteSettings: GET, PUT and PATCH /api/user/site through the stack on both
// backends: the defaults, a change of some fields, null resets, the count of notes a
// change lists (only notes of the account with a path under a root, active, not
// `site: false`), a dry run that names them and changes nothing, and each refused value,
// which changes nothing.
func TestSiteSettings(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		send := func(t *testing.T, acc testkit.Account, method, body string) *testkit.Response {
			return f.Do(t, testkit.Request{Method: method, Path: "/api/user/site", Token: acc.Token,
				Body: []byte(body), ContentType: "application/json"})
		}
		read := func(r *testkit.Response) wire.Site {
			var s wire.Site
			r.Decode(t, &s)
			return s
		}
		defaults := wire.Site{Roots: []string{}}
		if got := read(f.get("/api/user/site", f.acc.Token).Expect(t, http.StatusOK, "")); !equalSites(got, defaults) {
			t.Fatalf("GET before any change = %+v, want the defaults %+v", got, defaults)
		}

		// In the site once it covers Garden: A and Sub/B. Not: another folder (until the
		// whole vault is a root), a note without a path, one that says site: false, an
		// expired one, an unpublished one, another account's.
		for _, p := range []string{"Garden/A.md", "Garden/Sub/B.md", "Private/C.md"} {
			f.publish(f.acc, note.Draft{Content: "# " + p, Path: new(p)})
		}
		f.publish(f.acc, note.Draft{Content: "# No path"})
		f.publish(f.acc, note.Draft{Content: "---\nsite: false\n---\n# Out", Path: new("Garden/Out.md")})
		soon := f.clock.Now().Add(time.Minute)
		f.publish(f.acc, note.Draft{Content: "# Expired", Path: new("Garden/Expired.md"), ExpiresAt: &soon})
		gone := f.publish(f.acc, note.Draft{Content: "# Gone", Path: new("Garden/Gone.md")})
		f.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: f.acc.Token, JSON: map[string]string{"cuid": gone}}).Expect(t, http.StatusOK, "")
		other := f.NewAccount(t, "other")
		f.publish(other, note.Draft{Content: "# Theirs", Path: new("Garden/Theirs.md")})
		f.clock.Advance(2 * time.Minute)

		want := wire.Site{Enabled: true, Handle: new("alice"), Roots: []string{"Garden"}, SiteURL: new(f.URL + "/@alice/"), NewlyListed: 2}
		enable := `{"enabled":true,"handle":"Alice","roots":["Garden/"]}`
		dry := func(t *testing.T, acc testkit.Account, method, query, body string) *testkit.Response {
			return f.Do(t, testkit.Request{Method: method, Path: "/api/user/site?" + query, Token: acc.Token, Body: []byte(body), ContentType: "application/json"})
		}
		preview := read(dry(t, f.acc, "PUT", "dry_run=true", enable).Expect(t, http.StatusOK, ""))
		var paths []string
		for _, n := range preview.NewlyListedNotes {
			paths = append(paths, n.Path)
		}
		if !equalSites(preview, want) || !slices.Equal(paths, []string{"Garden/A.md", "Garden/Sub/B.md"}) {
			t.Fatalf("a dry run gives %+v listing %v, want %+v listing Garden/A.md and Garden/Sub/B.md", preview, paths, want)
		}
		if got := read(f.get("/api/user/site", f.acc.Token).Expect(t, http.StatusOK, "")); !equalSites(got, defaults) {
			t.Fatalf("after a dry run the site is %+v, want it unchanged", got)
		}
		dry(t, f.acc, "PUT", "dry_run=maybe", enable).Expect(t, http.StatusBadRequest, "invalid_field")
		dry(t, f.acc, "PATCH", "dry_run=true", `{"handle":"api"}`).Expect(t, http.StatusBadRequest, "invalid_field")
		if got := read(send(t, f.acc, "PUT", enable).Expect(t, http.StatusOK, "")); !equalSites(got, want) {
			t.Fatalf("PUT gives %+v, want %+v", got, want)
		}
		want.Title, want.NewlyListed = new("My garden"), 0
		if got := read(send(t, f.acc, "PATCH", `{"title":"My garden"}`).Expect(t, http.StatusOK, "")); !equalSites(got, want) {
			t.Fatalf("PATCH {title} gives %+v, want %+v", got, want)
		}
		want.Roots, want.NewlyListed = []string{"Garden", ""}, 1
		if got := read(send(t, f.acc, "PATCH", `{"roots":["Garden",""]}`).Expect(t, http.StatusOK, "")); !equalSites(got, want) {
			t.Fatalf("PATCH {roots} with the whole vault gives %+v, want %+v (Private/C.md listed)", got, want)
		}
		want.Title, want.Home, want.NewlyListed = nil, new("Garden/A.md"), 0
		if got := read(send(t, f.acc, "PATCH", `{"title":null,"home":"Garden/A.md"}`).Expect(t, http.StatusOK, "")); !equalSites(got, want) {
			t.Fatalf("PATCH {title: null, home} gives %+v, want %+v", got, want)
		}
		send(t, f.acc, "PATCH", `{}`).Expect(t, http.StatusBadRequest, "invalid_body")

		for _, tc := range []struct{ name, body, field string }{
			{"a one-letter handle", `{"handle":"a"}`, "handle"},
			{"a handle starting with -", `{"handle":"-ab"}`, "handle"},
			{"a handle with a dot", `{"handle":"a.b"}`, "handle"},
			{"a reserved handle", `{"handle":"API"}`, "handle"},
			{"a handle another account holds", `{"handle":"bob"}`, "handle"},
			{"21 roots", `{"roots":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21"]}`, "roots"},
			{"an absolute root", `{"roots":["/Garden"]}`, "roots"},
			{"a root with ..", `{"roots":["Garden/../Private"]}`, "roots"},
			{"a home outside the roots", `{"roots":["Garden"],"home":"Private/C.md"}`, "home"},
			{"a home that is not a note", `{"home":"Garden/A.txt"}`, "home"},
			{"a blank title", `{"title":"   "}`, "title"},
			{"enabled without a handle", `{"handle":null}`, "enabled"},
			{"enabled without roots", `{"roots":[],"home":null}`, "enabled"},
			{"an unknown field", `{"theme":"dark"}`, "theme"},
			{"a number for a handle", `{"handle":5}`, "handle"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.field == "handle" && strings.Contains(tc.body, "bob") {
					send(t, other, "PUT", `{"handle":"bob"}`).Expect(t, http.StatusOK, "")
				}
				r := send(t, f.acc, "PATCH", tc.body).Expect(t, http.StatusBadRequest, "invalid_field")
				var e struct{ Message string }
				if err := json.Unmarshal(r.Body, &e); err != nil || !strings.Contains(e.Message, tc.field) {
					t.Errorf("the message %q does not name %s", e.Message, tc.field)
				}
			})
		}
		if got := read(f.get("/api/user/site", f.acc.Token).Expect(t, http.StatusOK, "")); !equalSites(got, want) {
			t.Fatalf("after the refused bodies the site is %+v, want %+v", got, want)
		}

		// A handle once used stays its account's: after alice moves to alice2, or resets
		// everything, no one else takes alice, and its account takes it back.
		send(t, f.acc, "PATCH", `{"handle":"alice2"}`).Expect(t, http.StatusOK, "")
		send(t, other, "PATCH", `{"handle":"alice"}`).Expect(t, http.StatusBadRequest, "invalid_field")
		dry(t, other, "PATCH", "dry_run=true", `{"handle":"alice"}`).Expect(t, http.StatusBadRequest, "invalid_field")
		if got := read(send(t, f.acc, "PUT", `{}`).Expect(t, http.StatusOK, "")); !equalSites(got, defaults) {
			t.Fatalf("PUT {} gives %+v, want the defaults", got)
		}
		send(t, other, "PATCH", `{"handle":"alice2"}`).Expect(t, http.StatusBadRequest, "invalid_field")
		send(t, f.acc, "PATCH", `{"handle":"alice"}`).Expect(t, http.StatusOK, "")
	})
}

// TestSiteReservedHandlesAreConfigured: SHARE_SITE_RESERVED_HANDLES replaces the list.
func TestSiteReservedHandlesAreConfigured(t *testing.T) {
	s := testkit.StartServer(t, testkit.SQLiteBackend(t), targets, testkit.WithEnv("SHARE_SITE_RESERVED_HANDLES", "Garden, notes"))
	acc := s.NewAccount(t, "owner")
	put := func(handle string) *testkit.Response {
		return s.Do(t, testkit.Request{Method: "PUT", Path: "/api/user/site", Token: acc.Token, JSON: map[string]string{"handle": handle}})
	}
	put("garden").Expect(t, http.StatusBadRequest, "invalid_field")
	put("notes").Expect(t, http.StatusBadRequest, "invalid_field")
	put("api").Expect(t, http.StatusOK, "")
}

func equalSites(a, b wire.Site) bool {
	eq := func(x, y *string) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return a.Enabled == b.Enabled && eq(a.Handle, b.Handle) && slices.Equal(a.Roots, b.Roots) && eq(a.Home, b.Home) &&
		eq(a.Title, b.Title) && eq(a.SiteURL, b.SiteURL) && a.NewlyListed == b.NewlyListed
}
