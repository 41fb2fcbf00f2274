package sharenote_test

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/edge"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// startWithEdge starts the all-in-one with fake as its edge, whose reads come from
// 127.0.0.1 (the test's client); a reader from 127.0.0.2 calls the origin directly.
func startWithEdge(t *testing.T, b testkit.Backend, fake *testkit.FakeEdge) *testkit.Server {
	t.Helper()
	return start(t, b, testkit.WithEnv("SHARE_EDGE_PURGE_URLS", fake.URL), testkit.WithEnv("SHARE_EDGE_ADDRESSES", "127.0.0.1"))
}

// edgeKeys are the keys of the installation of b.
func edgeKeys(t *testing.T, b testkit.Backend) *edge.Keys {
	t.Helper()
	keys, err := edge.LoadKeys(context.Background(), testkit.OpenDB(t, b))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// surrogateKeys reads path as the edge does and returns its Surrogate-Key values.
func surrogateKeys(t *testing.T, s *testkit.Server, path string) []string {
	t.Helper()
	resp := s.Do(t, testkit.Request{Method: "GET", Path: path}).Expect(t, http.StatusOK, "")
	return strings.Fields(resp.Header.Get("Surrogate-Key"))
}

// TestEdgeHeaders: with an edge, public reads carry keys that do not show the note or
// the account, and an edge lifetime cut to the expiry; the browser's stays ≤ 60 s.
func TestEdgeHeaders(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := startWithEdge(t, b, testkit.StartFakeEdge(t))
		acc := s.NewAccount(t, "edgeheaders")
		id := publishJSON(t, s, acc.Token, map[string]any{"content": "hello", "title": "Hello"})
		keys := surrogateKeys(t, s, "/api/notes/"+id)
		if want := []string{edgeKeys(t, b).Content(id)}; !slices.Equal(keys, want) {
			t.Errorf("the JSON's keys %q, want its content key alone %q", keys, want)
		}
		if page := surrogateKeys(t, s, "/s/"+id); !slices.Equal(page, keys) {
			t.Errorf("the page's keys %q differ from the JSON's %q", page, keys)
		}
		for _, k := range keys {
			if strings.Contains(k, id) || strings.Contains(k, acc.UserCUID) {
				t.Errorf("key %s shows the note or the account", k)
			}
		}
		resp := s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + id})
		if resp.MaxAge(t) > 60*time.Second {
			t.Errorf("Cache-Control %q, want at most 60 s", resp.Header.Get("Cache-Control"))
		}
		if got := resp.Header.Get("Surrogate-Control"); got != "max-age=3600, stale-while-revalidate=30" {
			t.Errorf("Surrogate-Control %q, want the default hour with a grace", got)
		}
		soon := publishJSON(t, s, acc.Token, map[string]any{"content": "soon", "expires_at": s.Clock.Now().Add(100 * time.Second).Format(time.RFC3339)})
		got := s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + soon}).Header.Get("Surrogate-Control")
		m := regexp.MustCompile(`^max-age=(\d+)$`).FindStringSubmatch(got)
		if n, _ := strconv.Atoi(m[1]); m == nil || n > 100 || n < 90 {
			t.Errorf("Surrogate-Control of a note expiring in 100 s: %q, want max-age ≤ 100 and no grace", got)
		}
	})
}

// TestNoEdgeNoHeaders: without an edge, public reads carry no Surrogate-* header.
func TestNoEdgeNoHeaders(t *testing.T) {
	s := start(t, testkit.SQLiteBackend(t))
	acc := s.NewAccount(t, "noedge")
	id := publishJSON(t, s, acc.Token, map[string]any{"content": "hello"})
	resp := s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + id})
	if resp.Header.Get("Surrogate-Key") != "" || resp.Header.Get("Surrogate-Control") != "" {
		t.Errorf("Surrogate headers without an edge: %v", resp.Header)
	}
}

// TestEdgePurgesEveryChange: each change that alters a public read purges the right keys,
// of the right kind, once at once and once more after the change feed's second: a body
// edit the content key (soft) and not the reference key; a retitle, a move, an unshare, an
// expiry set or moved, hidden properties both keys, the last three hard; a settings
// change every key of the account, hard when it hides the author; an edge that was down
// during a change is purged within a second of coming back.
func TestEdgePurgesEveryChange(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		fake := testkit.StartFakeEdge(t)
		s := startWithEdge(t, b, fake)
		keys := edgeKeys(t, b)
		acc := s.NewAccount(t, "edgepurges")
		target := publishJSON(t, s, acc.Token, map[string]any{"content": "target", "title": "Target"})
		linker := publishJSON(t, s, acc.Token, map[string]any{"content": "see [[Target]]", "title": "Linker"})
		props := publishJSON(t, s, acc.Token, map[string]any{"content": "props", "properties": map[string]any{"k": "v"}})
		moved := publishJSON(t, s, acc.Token, map[string]any{"content": "moved", "path": "a/moved.md"})
		patch := func(id string, body map[string]any) func() {
			return func() {
				s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: acc.Token, JSON: body}).Expect(t, 200, "")
			}
		}
		settings := func(body map[string]any) func() {
			return func() {
				s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: acc.Token, JSON: body}).Expect(t, 200, "")
			}
		}
		time.Sleep(1500 * time.Millisecond) // The publishes' purges are sent twice and gone.
		type sent int                       // How a key is sent: not, soft or hard.
		const (
			not sent = iota
			soft
			hard
		)
		for _, c := range []struct {
			name   string
			change func()
			want   map[string]sent
		}{
			{"body edit", patch(linker, map[string]any{"content": "see [[Target]] again"}),
				map[string]sent{keys.Content(linker): soft, keys.Reference(linker): not}},
			{"settings", settings(map[string]any{"theme": "dark"}),
				map[string]sent{keys.Content(target): soft, keys.Reference(target): soft, keys.Content(linker): soft}},
			{"author hidden", settings(map[string]any{"show_author": false}),
				map[string]sent{keys.Content(target): hard, keys.Reference(target): hard, keys.Content(linker): hard}},
			{"linked note renamed", patch(target, map[string]any{"title": "Renamed"}),
				map[string]sent{keys.Content(target): soft, keys.Reference(target): soft}},
			{"moved", patch(moved, map[string]any{"path": "b/moved.md"}),
				map[string]sent{keys.Content(moved): soft, keys.Reference(moved): soft}},
			{"properties hidden", patch(props, map[string]any{"show_properties": false}),
				map[string]sent{keys.Content(props): hard, keys.Reference(props): hard}},
			{"expiry moved", patch(linker, map[string]any{"expires_at": s.Clock.Now().Add(time.Hour).Format(time.RFC3339)}),
				map[string]sent{keys.Content(linker): hard, keys.Reference(linker): hard}},
			{"unshare", func() {
				s.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]any{"cuid": target}}).Expect(t, 200, "")
			}, map[string]sent{keys.Content(target): hard, keys.Reference(target): hard}},
		} {
			start := time.Now()
			c.change()
			first := keys.Author(acc.UserCUID) // Every change of the account's notes purges it.
			within(t, time.Now(), time.Second, c.name+" purged", func() bool { h, s, _ := fake.Sent(first, start); return len(h)+len(s) > 0 })
			// The second send, after the change feed's second; and no third.
			within(t, time.Now(), 2*time.Second, c.name+" purged again", func() bool { h, s, _ := fake.Sent(first, start); return len(h)+len(s) > 1 })
			time.Sleep(300 * time.Millisecond)
			for key, want := range c.want {
				h, sf, all := fake.Sent(key, start)
				sends := map[sent][]time.Time{soft: sf, hard: h}[want]
				ok := len(h)+len(sf) == 0
				if want != not {
					ok = len(h)+len(sf) == 2 && len(sends) == 2 && sends[1].Sub(sends[0]) >= time.Second
				}
				if !ok || len(all) != 0 {
					t.Errorf("%s: key %s sent hard at %v, soft at %v (everything at %v); want it %s", c.name, key, h, sf, all,
						map[sent]string{not: "not sent", soft: "soft twice, a second apart", hard: "hard twice, a second apart"}[want])
				}
			}
		}
	})
}

// TestEdgeKeysOfAPage: a page carries its note's content key, the content keys of the
// notes it embeds and the reference keys of those it links to, and no author key; a page
// with more than 64 of them carries 64 and its author's key instead of the rest.
func TestEdgeKeysOfAPage(t *testing.T) {
	b := testkit.SQLiteBackend(t)
	s := startWithEdge(t, b, testkit.StartFakeEdge(t))
	keys := edgeKeys(t, b)
	acc := s.NewAccount(t, "edgekeyspage")
	embedded := publishJSON(t, s, acc.Token, map[string]any{"content": "shown", "title": "Shown"})
	linked := publishJSON(t, s, acc.Token, map[string]any{"content": "led to", "title": "Led To"})
	page := publishJSON(t, s, acc.Token, map[string]any{"content": "![[Shown]]\n\nand [[Led To]]", "title": "Page"})
	got := surrogateKeys(t, s, "/s/"+page)
	if want := []string{keys.Content(page), keys.Content(embedded), keys.Reference(linked)}; !slices.Equal(got, want) {
		t.Errorf("the page's keys %q, want %q (its own, the embed's content key, the link's reference key)", got, want)
	}
	// An embed shown as a link (its heading is missing) is a link: its note's reference key.
	fallback := publishJSON(t, s, acc.Token, map[string]any{"content": "![[Led To#Nowhere]]", "title": "Fallback"})
	if got, want := surrogateKeys(t, s, "/s/"+fallback), []string{keys.Content(fallback), keys.Reference(linked)}; !slices.Equal(got, want) {
		t.Errorf("the keys of a page whose embed shows as a link %q, want %q (its own, the reference key of the note it leads to)", got, want)
	}
	var body strings.Builder
	for i := range 70 {
		title := "Many " + strconv.Itoa(i)
		if _, err := testkit.Must(s.App.Deps().Publisher()).Publish(context.Background(), acc.UserCUID, note.Draft{Content: "many", Title: &title, ShowProperties: true}); err != nil {
			t.Fatal(err)
		}
		body.WriteString("[[" + title + "]] ")
	}
	hub := publishJSON(t, s, acc.Token, map[string]any{"content": body.String(), "title": "Hub"})
	got = surrogateKeys(t, s, "/s/"+hub)
	if len(got) != 65 || got[0] != keys.Content(hub) || got[64] != keys.Author(acc.UserCUID) || slices.Index(got, keys.Author(acc.UserCUID)) != 64 {
		t.Errorf("a page linking to 70 notes: %d keys %q, want its content key, 63 reference keys and its author's key", len(got), got)
	}
}

// TestEdgeKeysOnlyThroughTheEdge: a reader who calls the origin directly, not through an
// edge address (SHARE_EDGE_ADDRESSES), gets no Surrogate-Key and no Surrogate-Control,
// also when it names the edge in X-Forwarded-For, nor on a 404.
func TestEdgeKeysOnlyThroughTheEdge(t *testing.T) {
	s := startWithEdge(t, testkit.SQLiteBackend(t), testkit.StartFakeEdge(t))
	acc := s.NewAccount(t, "edgeonly")
	id := publishJSON(t, s, acc.Token, map[string]any{"content": "hello", "title": "Hello"})
	direct := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	for _, path := range []string{"/s/" + id, "/api/notes/" + id, "/s/" + id + "x"} {
		for _, xff := range []string{"", "127.0.0.1"} {
			req, _ := http.NewRequest("GET", s.URL+path, nil)
			if xff != "" {
				req.Header.Set("X-Forwarded-For", xff)
			}
			resp, err := direct.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.Header.Get("Surrogate-Key") != "" || resp.Header.Get("Surrogate-Control") != "" {
				t.Errorf("GET %s from 127.0.0.2 (X-Forwarded-For %q): %d, Surrogate-Key %q, Surrogate-Control %q; want neither",
					path, xff, resp.StatusCode, resp.Header.Get("Surrogate-Key"), resp.Header.Get("Surrogate-Control"))
			}
		}
	}
	if keys := surrogateKeys(t, s, "/s/"+id); len(keys) == 0 {
		t.Error("the edge's read has no Surrogate-Key")
	}
}

// TestEdgeOutagePurgedWhenBack: a change made while the edge is down reaches it within a
// second of its coming back.
func TestEdgeOutagePurgedWhenBack(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		fake := testkit.StartFakeEdge(t)
		s := startWithEdge(t, b, fake)
		acc := s.NewAccount(t, "edgeoutage")
		id := publishJSON(t, s, acc.Token, map[string]any{"content": "one"})
		key := surrogateKeys(t, s, "/api/notes/"+id)[0]
		fake.Stop()
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: acc.Token, JSON: map[string]any{"content": "two"}}).Expect(t, 200, "")
		time.Sleep(1500 * time.Millisecond)
		back := time.Now()
		fake.Start(t)
		within(t, back, time.Second, "purge after the outage", func() bool { _, soft, _ := fake.Sent(key, back); return len(soft) > 0 })
	})
}
