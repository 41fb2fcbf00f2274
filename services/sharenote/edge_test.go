package sharenote_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit"
)

// startWithEdge starts the all-in-one with fake as its edge.
func startWithEdge(t *testing.T, b testkit.Backend, fake *testkit.FakeEdge) *testkit.Server {
	t.Helper()
	return start(t, b, testkit.WithEnv("SHARE_EDGE_PURGE_URLS", fake.URL))
}

// surrogateKeys reads path and returns its note and author Surrogate-Key values.
func surrogateKeys(t *testing.T, s *testkit.Server, path string) (note, author string) {
	t.Helper()
	resp := s.Do(t, testkit.Request{Method: "GET", Path: path}).Expect(t, http.StatusOK, "")
	keys := strings.Fields(resp.Header.Get("Surrogate-Key"))
	if len(keys) != 2 || keys[0][0] != 'n' || keys[1][0] != 'a' {
		t.Fatalf("%s: Surrogate-Key %q, want a note key and an author key", path, resp.Header.Get("Surrogate-Key"))
	}
	return keys[0], keys[1]
}

// TestEdgeHeaders: with an edge, public reads carry keys that do not show the note or
// the account, and an edge lifetime cut to the expiry; the browser's stays ≤ 60 s.
func TestEdgeHeaders(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := startWithEdge(t, b, testkit.StartFakeEdge(t))
		acc := s.NewAccount(t, "edgeheaders")
		id := publishJSON(t, s, acc.Token, map[string]any{"content": "hello", "title": "Hello"})
		n, a := surrogateKeys(t, s, "/api/notes/"+id)
		if pn, pa := surrogateKeys(t, s, "/s/"+id); pn != n || pa != a {
			t.Errorf("the page's keys %s %s differ from the JSON's %s %s", pn, pa, n, a)
		}
		for _, k := range []string{n, a} {
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

// TestEdgePurgesEveryChange: each change that alters a public read purges the right key,
// of the right kind, once at once and once more after the change feed's second; an edge
// that was down during a change is purged within a second of coming back.
func TestEdgePurgesEveryChange(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		fake := testkit.StartFakeEdge(t)
		s := startWithEdge(t, b, fake)
		acc := s.NewAccount(t, "edgepurges")
		target := publishJSON(t, s, acc.Token, map[string]any{"content": "target", "title": "Target"})
		linker := publishJSON(t, s, acc.Token, map[string]any{"content": "see [[Target]]", "title": "Linker"})
		_, author := surrogateKeys(t, s, "/api/notes/"+target)
		note, _ := surrogateKeys(t, s, "/s/"+linker)
		patch := func(id string, body map[string]any) func() {
			return func() {
				s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: acc.Token, JSON: body}).Expect(t, 200, "")
			}
		}
		time.Sleep(1500 * time.Millisecond) // The publishes' purges are sent twice and gone.
		for _, c := range []struct {
			name   string
			change func()
			key    string
			hard   bool
		}{
			{"PATCH", patch(linker, map[string]any{"content": "see [[Target]] again"}), note, false},
			{"settings", func() {
				s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: acc.Token, JSON: map[string]any{"theme": "dark"}}).Expect(t, 200, "")
			}, author, false},
			{"linked note renamed", patch(target, map[string]any{"title": "Renamed"}), author, false},
			{"expiry moved", patch(linker, map[string]any{"expires_at": s.Clock.Now().Add(time.Hour).Format(time.RFC3339)}), note, true},
			{"unshare", func() {
				s.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]any{"cuid": linker}}).Expect(t, 200, "")
			}, note, true},
		} {
			start := time.Now()
			c.change()
			within(t, time.Now(), time.Second, c.name+" purged", func() bool { h, s, _ := fake.Sent(c.key, start); return len(h)+len(s) > 0 })
			// The second send, after the change feed's second; and no third.
			within(t, time.Now(), 2*time.Second, c.name+" purged again", func() bool { h, s, _ := fake.Sent(c.key, start); return len(h)+len(s) > 1 })
			time.Sleep(300 * time.Millisecond)
			hard, soft, all := fake.Sent(c.key, start)
			sends := soft
			if c.hard {
				sends = hard
			}
			if len(hard)+len(soft) != 2 || len(sends) != 2 || sends[1].Sub(sends[0]) < time.Second || len(all) != 0 {
				t.Errorf("%s: key sent hard at %v, soft at %v (everything at %v); want it %s twice, a second apart", c.name, hard, soft, all, map[bool]string{true: "hard", false: "soft"}[c.hard])
			}
		}
	})
}

// TestEdgeOutagePurgedWhenBack: a change made while the edge is down reaches it within a
// second of its coming back.
func TestEdgeOutagePurgedWhenBack(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		fake := testkit.StartFakeEdge(t)
		s := startWithEdge(t, b, fake)
		acc := s.NewAccount(t, "edgeoutage")
		id := publishJSON(t, s, acc.Token, map[string]any{"content": "one"})
		key, _ := surrogateKeys(t, s, "/api/notes/"+id)
		fake.Stop()
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: acc.Token, JSON: map[string]any{"content": "two"}}).Expect(t, 200, "")
		time.Sleep(1500 * time.Millisecond)
		back := time.Now()
		fake.Start(t)
		within(t, back, time.Second, "purge after the outage", func() bool { _, soft, _ := fake.Sent(key, back); return len(soft) > 0 })
	})
}
