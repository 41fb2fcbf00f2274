package notes_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/notes"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var targets = []app.Target{notes.Target}

// fixture is a server with one account and helpers to publish through the domain (the
// publish route belongs to another service) and to call the notes routes.
type fixture struct {
	*testkit.Server
	t     *testing.T
	acc   testkit.Account
	clock *testkit.Clock
}

func newFixture(t *testing.T, b testkit.Backend) *fixture {
	clock := testkit.NewClock()
	s := testkit.StartServer(t, b, targets, testkit.WithClock(clock))
	return &fixture{Server: s, t: t, acc: s.NewAccount(t, "owner"), clock: clock}
}

func ptr[T any](v T) *T { return &v }

func (f *fixture) publish(acc testkit.Account, d note.Draft) string {
	f.t.Helper()
	p, err := testkit.Must(f.App.Deps().Publisher()).Publish(context.Background(), acc.UserCUID, d)
	if err != nil {
		f.t.Fatal(err)
	}
	return p.CUID
}

func (f *fixture) get(path, token string) *testkit.Response {
	f.t.Helper()
	return f.Do(f.t, testkit.Request{Method: "GET", Path: path, Token: token})
}

func (f *fixture) patch(cuid string, body any) *testkit.Response {
	f.t.Helper()
	return f.Do(f.t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + cuid, Token: f.acc.Token, JSON: body})
}

type publicNote struct {
	CUID, URL, Content     string
	Title, Summary, Author *string
	Appearance             struct{ Theme, AccentColor, Font string }
	PublishedAt, UpdatedAt string
	ExpiresAt              *string
	ShowProperties         bool
	Properties             map[string]any
}

func TestPublicRead(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(f.acc, note.Draft{Content: "---\ntags: [x]\n---\n# Body", Summary: ptr("S"), ShowProperties: true})
		resp := f.get("/api/notes/"+id, "").Expect(t, 200, "")
		var n publicNote
		resp.Decode(t, &n)
		if n.CUID != id || n.URL != f.URL+"/s/"+id || n.Content != "# Body" || *n.Summary != "S" || n.Title != nil ||
			n.Author == nil || *n.Author != "owner" || n.Appearance.Theme != "system" || n.Appearance.AccentColor != "#5b6ee1" ||
			n.Appearance.Font != "sans" || n.ExpiresAt != nil || !n.ShowProperties || fmt.Sprint(n.Properties["tags"]) != "[x]" {
			t.Errorf("public note = %+v", n)
		}
		for _, key := range []string{`"publishedAt"`, `"updatedAt"`, `"showProperties"`, `"expiresAt"`, `"author"`} {
			if !strings.Contains(string(resp.Body), key) {
				t.Errorf("public JSON lacks %s: %s", key, resp.Body)
			}
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=60" {
			t.Errorf("Cache-Control = %q", cc)
		}
		etag := resp.Header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || resp.Header.Get("X-Robots-Tag") != "noindex" {
			t.Errorf("ETag %q / X-Robots-Tag %q", etag, resp.Header.Get("X-Robots-Tag"))
		}
		notModified := f.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + id, Header: map[string]string{"If-None-Match": etag}})
		if notModified.Status != http.StatusNotModified || len(notModified.Body) != 0 {
			t.Errorf("If-None-Match: %d %q, want 304 without body", notModified.Status, notModified.Body)
		}

		t.Run("settings shape the public view", func(t *testing.T) {
			f.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: f.acc.Token,
				JSON: map[string]any{"show_author": false, "indexable": true, "theme": "dark", "accent_color": "#AA00FF", "font": "mono"}}).Expect(t, 200, "")
			hidden := f.publish(f.acc, note.Draft{Content: "---\nsecret: 1\n---\nx", ShowProperties: false})
			resp := f.get("/api/notes/"+hidden, "").Expect(t, 200, "")
			var n publicNote
			resp.Decode(t, &n)
			if n.Author != nil || len(n.Properties) != 0 || n.ShowProperties || n.Appearance.Theme != "dark" ||
				n.Appearance.AccentColor != "#aa00ff" || n.Appearance.Font != "mono" {
				t.Errorf("public note = %+v", n)
			}
			if !strings.Contains(string(resp.Body), `"properties":{}`) || !strings.Contains(string(resp.Body), `"author":null`) {
				t.Errorf("want empty properties object and null author: %s", resp.Body)
			}
			if resp.Header.Get("X-Robots-Tag") != "" {
				t.Error("an indexable owner's note carries X-Robots-Tag")
			}
			if strings.Contains(string(resp.Body), "secret") {
				t.Error("hidden properties leak into the public JSON")
			}
		})

		t.Run("cache lifetime never outlives the note", func(t *testing.T) {
			soon := f.publish(f.acc, note.Draft{Content: "x", ExpiresAt: ptr(f.clock.Now().Add(25 * time.Second).Truncate(time.Millisecond))})
			cc := f.get("/api/notes/"+soon, "").Expect(t, 200, "").Header.Get("Cache-Control")
			if n, _ := strconv.Atoi(strings.TrimPrefix(cc, "public, max-age=")); n > 25 || n < 20 {
				t.Errorf("Cache-Control = %q, want max-age ≤ 25", cc)
			}
		})

		t.Run("not found, expired and unpublished are 404", func(t *testing.T) {
			expiring := f.publish(f.acc, note.Draft{Content: "x", ExpiresAt: ptr(f.clock.Now().Add(time.Hour))})
			gone := f.publish(f.acc, note.Draft{Content: "x"})
			if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), f.acc.UserCUID, gone); err != nil {
				t.Fatal(err)
			}
			f.get("/api/notes/"+expiring, "").Expect(t, 200, "")
			f.clock.Advance(time.Hour)
			for _, id := range []string{expiring, gone, "abcdefghijklmnopqrstuvwx", "short", "UPPERCASEUPPERCASEUPPERC"} {
				f.get("/api/notes/"+id, "").Expect(t, 404, "not_found")
			}
		})
	})
}

type ownerNote struct {
	CUID, URL, Content, Status string
	CreatedAt                  string `json:"created_at"`
	UpdatedAt                  string `json:"updated_at"`
	Title, Summary             *string
	ExpiresAt                  *string `json:"expires_at"`
	Properties                 map[string]any
	ShowProperties             bool `json:"show_properties"`
}

func TestUpdate(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(f.acc, note.Draft{Content: "v1", Title: ptr("T1"), Summary: ptr("S1"),
			Properties: map[string]any{"k": "v"}, ShowProperties: true, ExpiresAt: ptr(f.clock.Now().Add(time.Hour).Truncate(time.Millisecond))})

		var o ownerNote
		f.clock.Advance(time.Second)
		f.patch(id, map[string]any{"title": nil, "summary": nil, "properties": nil, "expires_at": nil}).Expect(t, 200, "").Decode(t, &o)
		if o.Title != nil || o.Summary != nil || o.Properties != nil || o.ExpiresAt != nil || o.Content != "v1" || o.Status != "active" ||
			o.CUID != id || o.URL != f.URL+"/s/"+id || o.CreatedAt == o.UpdatedAt {
			t.Errorf("after clearing: %+v", o)
		}
		f.patch(id, map[string]any{"content": "---\ntitle: From FM\nx: 1\n---\nv2", "show_properties": false}).Expect(t, 200, "").Decode(t, &o)
		if o.Content != "v2" || o.Title == nil || *o.Title != "From FM" || o.Properties["x"] != float64(1) || o.ShowProperties {
			t.Errorf("after content with frontmatter: %+v", o)
		}
		f.patch(id, map[string]any{"content": "---\nx: 1\n---\nv3", "properties": map[string]any{"x": 2}, "title": "Mine"}).Expect(t, 200, "").Decode(t, &o)
		if o.Properties["x"] != float64(2) || *o.Title != "Mine" {
			t.Errorf("request properties and title must win over frontmatter: %+v", o)
		}

		var versions struct {
			Versions []struct {
				Version      int64
				CreatedAt    string `json:"created_at"`
				Title        *string
				ContentBytes int `json:"content_bytes"`
			}
		}
		f.get("/api/notes/"+id+"/versions", f.acc.Token).Expect(t, 200, "").Decode(t, &versions)
		if len(versions.Versions) != 3 || versions.Versions[0].Version != 3 || versions.Versions[2].Version != 1 ||
			*versions.Versions[2].Title != "T1" || versions.Versions[2].ContentBytes != 2 {
			t.Fatalf("versions = %+v", versions)
		}
		var v1 struct {
			Version        int64
			Content        string
			Title, Summary *string
			Properties     map[string]any
		}
		f.get("/api/notes/"+id+"/versions/1", f.acc.Token).Expect(t, 200, "").Decode(t, &v1)
		if v1.Version != 1 || v1.Content != "v1" || *v1.Title != "T1" || v1.Properties["k"] != "v" {
			t.Errorf("version 1 is not the state before the first update: %+v", v1)
		}

		t.Run("expiry moves between active and expired", func(t *testing.T) {
			f.patch(id, map[string]any{"expires_at": f.clock.Now().Add(time.Minute).Format(time.RFC3339Nano)}).Expect(t, 200, "")
			f.clock.Advance(2 * time.Minute)
			f.get("/api/notes/"+id, "").Expect(t, 404, "not_found")
			f.patch(id, map[string]any{"summary": "still mine"}).Expect(t, 200, "").Decode(t, &o)
			if o.Status != "expired" {
				t.Errorf("status = %s, want expired", o.Status)
			}
			f.patch(id, map[string]any{"expires_at": f.clock.Now().Add(time.Hour).Format(time.RFC3339)}).Expect(t, 200, "").Decode(t, &o)
			if o.Status != "active" {
				t.Errorf("a future expiry did not reactivate: %s", o.Status)
			}
			f.get("/api/notes/"+id, "").Expect(t, 200, "")
		})

		t.Run("bad patches", func(t *testing.T) {
			cases := []struct {
				name   string
				body   any
				status int
				code   string
			}{
				{"empty object", map[string]any{}, 400, "invalid_body"},
				{"only unknown fields", map[string]any{"color": "red"}, 400, "invalid_body"},
				{"content null", map[string]any{"content": nil}, 400, "invalid_field"},
				{"title not a string", map[string]any{"title": 5}, 400, "invalid_field"},
				{"show_properties not boolean", map[string]any{"show_properties": "yes"}, 400, "invalid_field"},
				{"expiry in the past", map[string]any{"expires_at": "2001-01-01"}, 400, "invalid_field"},
				{"expiry not a date", map[string]any{"expires_at": "tomorrow"}, 400, "invalid_field"},
				{"properties an array", map[string]any{"properties": []int{1}}, 400, "invalid_properties"},
				{"frontmatter not a mapping", map[string]any{"content": "---\n- a\n---\nx"}, 400, "invalid_properties"},
				{"stored note too large", map[string]any{"content": strings.Repeat("a", 1_950_000)}, 413, "note_too_large"},
				{"request too large", map[string]any{"content": strings.Repeat("a", 2_000_001)}, 413, "payload_too_large"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { f.patch(id, c.body).Expect(t, c.status, c.code) })
			}
			f.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: f.acc.Token, Body: []byte("{"), ContentType: "application/json"}).
				Expect(t, 400, "invalid_body")
			// Markdown is a publish format only.
			f.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: f.acc.Token, Body: []byte("# v4"), ContentType: "text/markdown"}).
				Expect(t, 400, "unsupported_content_type")
			f.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: f.acc.Token, Body: []byte("content=v4"),
				ContentType: "application/x-www-form-urlencoded"}).Expect(t, 400, "unsupported_content_type")
			var after ownerNote
			f.get("/api/notes/"+id, "").Expect(t, 200, "").Decode(t, &after)
			if after.Content != "v3" {
				t.Errorf("a rejected patch changed the note: %q", after.Content)
			}
		})
	})
}

func TestVersionsKeepTheTenNewest(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(f.acc, note.Draft{Content: "v0"})
		for i := 1; i <= 12; i++ {
			f.patch(id, map[string]any{"content": fmt.Sprintf("v%d", i)}).Expect(t, 200, "")
		}
		var list struct{ Versions []struct{ Version int64 } }
		f.get("/api/notes/"+id+"/versions", f.acc.Token).Expect(t, 200, "").Decode(t, &list)
		var got []int64
		for _, v := range list.Versions {
			got = append(got, v.Version)
		}
		if fmt.Sprint(got) != "[12 11 10 9 8 7 6 5 4 3]" {
			t.Errorf("versions = %v, want 12 down to 3", got)
		}
		var v struct{ Content string }
		f.get("/api/notes/"+id+"/versions/3", f.acc.Token).Expect(t, 200, "").Decode(t, &v)
		if v.Content != "v2" {
			t.Errorf("version 3 content = %q, want the state before the third update", v.Content)
		}
		f.get("/api/notes/"+id+"/versions/2", f.acc.Token).Expect(t, 404, "not_found")
		f.get("/api/notes/"+id+"/versions/13", f.acc.Token).Expect(t, 404, "not_found")
		f.get("/api/notes/"+id+"/versions/99999999999999999999", f.acc.Token).Expect(t, 404, "not_found")
		for _, bad := range []string{"0", "-1", "abc", "1.5", "01", "%20"} {
			f.get("/api/notes/"+id+"/versions/"+bad, f.acc.Token).Expect(t, 400, "invalid_version")
		}
		other := f.NewAccount(t, "other")
		f.get("/api/notes/"+id+"/versions", other.Token).Expect(t, 404, "not_found")
		f.get("/api/notes/"+id+"/versions/12", other.Token).Expect(t, 404, "not_found")
	})
}

// Parallel PATCHes of one note all succeed, each kept as a version of its own: those of
// its content take turns to render, and those that change no content render nothing and
// wait for no render.
func TestParallelPatchesGetUniqueIncreasingVersions(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		for field, body := range map[string]func(i int) map[string]any{
			"content": func(i int) map[string]any { return map[string]any{"content": fmt.Sprintf("p%d", i)} },
			"title":   func(i int) map[string]any { return map[string]any{"title": fmt.Sprintf("t%d", i)} },
		} {
			t.Run(field, func(t *testing.T) {
				id := f.publish(f.acc, note.Draft{Content: "v0"})
				const n = 20
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() { f.patch(id, body(i)).Expect(t, 200, "") })
				}
				wg.Wait()
				var list struct{ Versions []struct{ Version int64 } }
				f.get("/api/notes/"+id+"/versions", f.acc.Token).Expect(t, 200, "").Decode(t, &list)
				var got []int64
				for _, v := range list.Versions {
					got = append(got, v.Version)
				}
				want := []int64{20, 19, 18, 17, 16, 15, 14, 13, 12, 11}
				if !slices.Equal(got, want) {
					t.Errorf("versions after %d parallel patches of the %s = %v, want %v", n, field, got, want)
				}
				var count int64
				if err := testkit.OpenDB(t, b).Table("versions").Where("publication_cuid = ?", id).Count(&count).Error; err != nil || count != 10 {
					t.Errorf("%d snapshots stored (%v), want exactly 10", count, err)
				}
			})
		}
	})
}

func TestUnshare(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(f.acc, note.Draft{Content: "x"})
		other := f.NewAccount(t, "other")
		unshare := func(token string, body any) *testkit.Response {
			return f.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: token, JSON: body})
		}
		unshare(other.Token, map[string]string{"cuid": id}).Expect(t, 404, "not_found")
		unshare(f.acc.Token, map[string]any{}).Expect(t, 400, "invalid_field")
		unshare(f.acc.Token, map[string]any{"cuid": 5}).Expect(t, 400, "invalid_field")
		f.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: f.acc.Token, Body: []byte("nope"), ContentType: "application/json"}).
			Expect(t, 400, "invalid_body")

		var resp struct{ CUID, Status string }
		unshare(f.acc.Token, map[string]string{"cuid": id}).Expect(t, 200, "").Decode(t, &resp)
		if resp.CUID != id || resp.Status != "unpublished" {
			t.Errorf("unshare = %+v", resp)
		}
		unshare(f.acc.Token, map[string]string{"cuid": id}).Expect(t, 404, "not_found")
		f.get("/api/notes/"+id, "").Expect(t, 404, "not_found")
		f.patch(id, map[string]any{"title": "x"}).Expect(t, 404, "not_found")
		f.get("/api/notes/"+id+"/versions", f.acc.Token).Expect(t, 404, "not_found")
		var list struct{ Notes []struct{ CUID string } }
		f.get("/api/user/notes", f.acc.Token).Expect(t, 200, "").Decode(t, &list)
		if len(list.Notes) != 0 {
			t.Errorf("an unpublished note is listed: %+v", list)
		}
	})
}

type listPage struct {
	Notes []struct {
		CUID, Status string
		ExpiresAt    *string `json:"expires_at"`
	}
	NextCursor *string `json:"next_cursor"`
}

func (f *fixture) list(token, query string) listPage {
	f.t.Helper()
	var p listPage
	f.get("/api/user/notes"+query, token).Expect(f.t, 200, "").Decode(f.t, &p)
	return p
}

func TestList(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		var ids []string
		for i := range 5 {
			if i == 3 {
				f.clock.Advance(time.Second) // Two groups of equal timestamps: ties break by cuid.
			}
			ids = append(ids, f.publish(f.acc, note.Draft{Content: "x"}))
		}
		want := slices.Clone(ids[3:])
		slices.Sort(want)
		slices.Reverse(want)
		older := slices.Clone(ids[:3])
		slices.Sort(older)
		slices.Reverse(older)
		want = append(want, older...)

		var got []string
		query := "?limit=2"
		for pages := 0; ; pages++ {
			p := f.list(f.acc.Token, query)
			for _, n := range p.Notes {
				got = append(got, n.CUID)
			}
			if p.NextCursor == nil {
				break
			}
			if pages == 0 {
				// Rows added while paging are newer: they must not disturb the pages after.
				f.clock.Advance(time.Second)
				f.publish(f.acc, note.Draft{Content: "late"})
			}
			query = "?limit=2&cursor=" + url.QueryEscape(*p.NextCursor)
		}
		if !slices.Equal(got, want) {
			t.Errorf("pages = %v\nwant    %v (newest first, ties by cuid descending)", got, want)
		}
		first := f.list(f.acc.Token, "")
		if len(first.Notes) != 6 || first.NextCursor != nil {
			t.Errorf("default page: %d notes, cursor %v", len(first.Notes), first.NextCursor)
		}

		t.Run("expired notes stay listed", func(t *testing.T) {
			f.clock.Advance(time.Second)
			exp := f.publish(f.acc, note.Draft{Content: "x", ExpiresAt: ptr(f.clock.Now().Add(time.Minute))})
			f.clock.Advance(2 * time.Minute)
			p := f.list(f.acc.Token, "?limit=1")
			if p.Notes[0].CUID != exp || p.Notes[0].Status != "expired" || p.Notes[0].ExpiresAt == nil {
				t.Errorf("newest = %+v, want the expired note", p.Notes[0])
			}
		})
		t.Run("only the caller's notes", func(t *testing.T) {
			other := f.NewAccount(t, "other")
			if p := f.list(other.Token, ""); len(p.Notes) != 0 {
				t.Errorf("another account sees %d notes", len(p.Notes))
			}
		})
		t.Run("bad limits and cursors", func(t *testing.T) {
			for _, q := range []string{"?limit=0", "?limit=101", "?limit=abc", "?limit=", "?limit=1.5", "?limit=-1"} {
				f.get("/api/user/notes"+q, f.acc.Token).Expect(t, 400, "invalid_limit")
			}
			cursor := *f.list(f.acc.Token, "?limit=1").NextCursor
			tampered := []byte(cursor)
			tampered[len(tampered)/2] ^= 1
			other := f.NewAccount(t, "thief")
			for _, c := range []string{"garbage", string(tampered), cursor + "A"} {
				f.get("/api/user/notes?cursor="+url.QueryEscape(c), f.acc.Token).Expect(t, 400, "invalid_cursor")
			}
			f.get("/api/user/notes?cursor="+url.QueryEscape(cursor), other.Token).Expect(t, 400, "invalid_cursor")
		})
	})
}

func TestDefaultPageSizeIsFifty(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	for range 51 {
		f.publish(f.acc, note.Draft{Content: "x"})
	}
	p := f.list(f.acc.Token, "")
	if len(p.Notes) != 50 || p.NextCursor == nil {
		t.Fatalf("default page has %d notes (cursor %v), want 50 and a cursor", len(p.Notes), p.NextCursor)
	}
	if rest := f.list(f.acc.Token, "?cursor="+url.QueryEscape(*p.NextCursor)); len(rest.Notes) != 1 || rest.NextCursor != nil {
		t.Errorf("second page: %d notes, cursor %v", len(rest.Notes), rest.NextCursor)
	}
	if p := f.list(f.acc.Token, "?limit=100"); len(p.Notes) != 51 {
		t.Errorf("limit=100 gave %d", len(p.Notes))
	}
}

func TestSettings(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		type settings struct {
			Settings map[string]any
			Storage  map[string]float64
		}
		var s settings
		f.get("/api/user/settings", f.acc.Token).Expect(t, 200, "").Decode(t, &s)
		if fmt.Sprint(s.Settings) != "map[accent_color:#5b6ee1 font:sans indexable:false name:owner show_author:true theme:system]" ||
			s.Storage["image_bytes_used"] != 0 || s.Storage["image_limit_bytes"] != 1e9 {
			t.Errorf("defaults = %+v", s)
		}
		call := func(method string, body any) *testkit.Response {
			return f.Do(t, testkit.Request{Method: method, Path: "/api/user/settings", Token: f.acc.Token, JSON: body})
		}
		call("PATCH", map[string]any{"theme": "dark", "name": "Ada L."}).Expect(t, 200, "").Decode(t, &s)
		if s.Settings["theme"] != "dark" || s.Settings["name"] != "Ada L." || s.Settings["font"] != "sans" {
			t.Errorf("after PATCH: %+v", s.Settings)
		}
		call("PUT", map[string]any{"font": "serif"}).Expect(t, 200, "").Decode(t, &s)
		if s.Settings["theme"] != "system" || s.Settings["name"] != "owner" || s.Settings["font"] != "serif" {
			t.Errorf("PUT must reset missing fields to defaults: %+v", s.Settings)
		}
		for name, body := range map[string]any{
			"unknown field":     map[string]any{"colour": "red"},
			"bad theme":         map[string]any{"theme": "neon"},
			"bad font":          map[string]any{"font": "comic"},
			"bad colour":        map[string]any{"accent_color": "#12345"},
			"named colour":      map[string]any{"accent_color": "red"},
			"empty name":        map[string]any{"name": ""},
			"long name":         map[string]any{"name": strings.Repeat("n", 101)},
			"blank name":        map[string]any{"name": "   "},
			"null":              map[string]any{"theme": nil},
			"wrong type":        map[string]any{"show_author": "yes"},
			"indexable as text": map[string]any{"indexable": "true"},
		} {
			t.Run(name, func(t *testing.T) {
				call("PATCH", body).Expect(t, 400, "invalid_field")
				call("PUT", body).Expect(t, 400, "invalid_field")
			})
		}
		call("PATCH", map[string]any{}).Expect(t, 400, "invalid_body")
		call("PATCH", []int{1}).Expect(t, 400, "invalid_body")
		f.get("/api/user/settings", f.acc.Token).Expect(t, 200, "").Decode(t, &s)
		if s.Settings["font"] != "serif" {
			t.Errorf("a rejected change altered the settings: %+v", s.Settings)
		}
	})
}
