//go:build e2e

package sharenote_test

// The edge end to end (`make e2e`): Varnish (Debian's varnish and varnish-modules) with
// deploy/varnish/sharenote.vcl in front of the split e2e's nginx ingress (when nginx is
// installed), in front of a round-robin proxy that counts what reaches the origin, in front
// of two all-in-one replicas on Postgres and Redis.

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/testkit/ingress"
)

// origin is a round-robin proxy over the replicas that counts the requests per path.
type origin struct {
	next  atomic.Uint64
	mu    sync.Mutex
	count map[string]int
}

func (o *origin) hits(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.count[path]
}

func startOrigin(t *testing.T, replicas ...*testkit.Server) (*origin, string) {
	o := &origin{count: map[string]int{}}
	targets := make([]*url.URL, len(replicas))
	for i, r := range replicas {
		targets[i], _ = url.Parse(r.URL)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(targets[o.next.Add(1)%uint64(len(targets))])
		// As an ingress does: the forwarded chain, with the peer appended.
		r.Out.Header["X-Forwarded-For"] = r.In.Header["X-Forwarded-For"]
		r.SetXForwarded()
		o.mu.Lock()
		o.count[r.In.URL.Path]++
		o.mu.Unlock()
	}}
	return o, serveLoopback(t, proxy)
}

// serveLoopback serves h on a loopback port until the test ends and returns its address.
func serveLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// startVarnish runs varnishd on addr with the shipped VCL, its backend set to backend.
func startVarnish(t *testing.T, bin, addr, backend string) {
	vcl, err := os.ReadFile("../../deploy/varnish/sharenote.vcl")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(backend)
	text := strings.Replace(string(vcl), ".host = \"127.0.0.1\";\n    .port = \"8080\";", ".host = \""+host+"\";\n    .port = \""+port+"\";", 1)
	if text == string(vcl) {
		t.Fatal("the VCL's backend default block is not the one the test rewrites")
	}
	dir, err := os.MkdirTemp("", "sharenote-varnish-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755) // The child runs as the varnish user.
	file := filepath.Join(dir, "sharenote.vcl")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-F", "-n", filepath.Join(dir, "n"), "-a", addr, "-f", file, "-s", "malloc,64m", "-T", "none")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("varnishd did not listen within 20 s")
		}
	}
}

// relay forwards TCP connections from its address to to's until stopped: the purge path
// to the edge, which the test cuts to make an edge outage that keeps the edge's cache.
type relay struct {
	// from, when set, is the address the relay dials from.
	addr, to, from string
	mu             sync.Mutex
	l              net.Listener
}

func (r *relay) start(t *testing.T) {
	l, err := net.Listen("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.l = l
	r.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				d := net.Dialer{}
				if r.from != "" {
					d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(r.from)}
				}
				u, err := d.Dial("tcp", r.to)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { _, _ = io.Copy(u, c) }()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
}

func (r *relay) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.l != nil {
		_ = r.l.Close()
		r.l = nil
	}
}

// edgeGet reads path through the edge at base.
func edgeGet(t *testing.T, base, path string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// edgeFrom is the address the edge's requests to the origin come from
// (SHARE_EDGE_ADDRESSES): the edge reaches the ingress through a relay that dials from
// it, so that a reader who calls the ingress directly (from 127.0.0.1 or 127.0.0.2) is
// told apart from the edge.
const edgeFrom = "127.0.0.9"

// edgeStack is the edge e2e's stack: two replicas on Postgres and Redis behind the
// counting origin, the nginx ingress when installed, and Varnish, whose fetches reach
// the ingress from edgeFrom.
type edgeStack struct {
	// base is the edge's URL, ingress the ingress's (or the origin's) address.
	base, ingress string
	one           *testkit.Server
	origin        *origin
	purges        *relay
}

func startEdgeStack(t *testing.T) *edgeStack {
	t.Helper()
	bin, err := exec.LookPath("varnishd")
	if err != nil {
		t.Skip("varnishd not installed: apt-get install varnish varnish-modules")
	}
	b := testkit.PostgresBackend(t)
	listen, purgeAddr, fetchAddr := testkit.FreeAddr(), testkit.FreeAddr(), testkit.FreeAddr()
	opts := []testkit.Option{testkit.WithEnv("SHARE_EDGE_PURGE_URLS", "http://"+purgeAddr), testkit.WithClock(testkit.WallClock()),
		testkit.WithEnv("SHARE_EDGE_ADDRESSES", edgeFrom), testkit.WithEnv("SHARE_TRUSTED_PROXIES", "127.0.0.1,"+edgeFrom)}
	one, two := start(t, b, opts...), start(t, b, opts...)
	o, originAddr := startOrigin(t, one, two)
	if nginx := ingress.NginxBinary(); nginx != "" {
		ingressAddr := testkit.FreeAddr()
		startNginx(t, nginx, ingressAddr, maps.Collect(func(yield func(string, string) bool) {
			for _, target := range routes.Targets {
				yield(target, originAddr)
			}
		}))
		originAddr = ingressAddr
	}
	fetches := &relay{addr: fetchAddr, to: originAddr, from: edgeFrom}
	fetches.start(t)
	t.Cleanup(fetches.stop)
	startVarnish(t, bin, listen, fetchAddr)
	purges := &relay{addr: purgeAddr, to: listen}
	purges.start(t)
	t.Cleanup(purges.stop)
	return &edgeStack{base: "http://" + listen, ingress: originAddr, one: one, origin: o, purges: purges}
}

func TestE2EEdgeVarnish(t *testing.T) {
	st := startEdgeStack(t)
	base, one, o, purges := st.base, st.one, st.origin, st.purges
	acc := one.NewAccount(t, "edgee2e")
	patch := func(id string, body map[string]any) {
		one.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: acc.Token, JSON: body}).Expect(t, 200, "")
	}
	served := func(name, path string, want func(status int, body string) bool) {
		t.Helper()
		within(t, time.Now(), time.Second, name, func() bool { s, body, _ := edgeGet(t, base, path); return want(s, body) })
	}
	has := func(text string) func(int, string) bool {
		return func(s int, body string) bool { return s == 200 && strings.Contains(body, text) }
	}
	gone := func(s int, _ string) bool { return s == http.StatusNotFound }

	hot := publishJSON(t, one, acc.Token, map[string]any{"content": "hot one", "title": "Hot"})
	t.Run("1,000 reads cost the origin one", func(t *testing.T) {
		// A note with names purges its author's reads, itself included, twice: let that pass.
		time.Sleep(1500 * time.Millisecond)
		for range 1000 {
			if s, _, _ := edgeGet(t, base, "/api/notes/"+hot); s != 200 {
				t.Fatalf("status %d", s)
			}
		}
		if n := o.hits("/api/notes/" + hot); n != 1 {
			t.Errorf("1,000 reads through the edge reached the origin %d times, want 1", n)
		}
		_, _, h := edgeGet(t, base, "/api/notes/"+hot+"?x=random")
		if h.Get("X-Cache") != "HIT" || o.hits("/api/notes/"+hot) != 1 {
			t.Errorf("?x=random: X-Cache %q, origin reads %d; want a hit", h.Get("X-Cache"), o.hits("/api/notes/"+hot))
		}
		for _, k := range []string{"Surrogate-Key", "Surrogate-Control", "Xkey"} {
			if h.Get(k) != "" {
				t.Errorf("the reader got %s: %q", k, h.Get(k))
			}
		}
		if cc := h.Get("Cache-Control"); !strings.HasPrefix(cc, "public, max-age=") || len(cc) > len("public, max-age=60") {
			t.Errorf("Cache-Control %q, want at most 60 s", cc)
		}
	})
	t.Run("PATCH", func(t *testing.T) {
		patch(hot, map[string]any{"content": "hot two"})
		served("PATCH through the edge", "/api/notes/"+hot, has("hot two"))
	})
	t.Run("settings", func(t *testing.T) {
		edgeGet(t, base, "/s/"+hot)
		one.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: acc.Token, JSON: map[string]any{"theme": "dark"}}).Expect(t, 200, "")
		served("settings through the edge", "/api/notes/"+hot, has(`"dark"`))
	})
	t.Run("a linked note renamed", func(t *testing.T) {
		target := publishJSON(t, one, acc.Token, map[string]any{"content": "target", "title": "Target"})
		linker := publishJSON(t, one, acc.Token, map[string]any{"content": "see [[Target]]", "title": "Linker"})
		served("the link", "/s/"+linker, has("/s/"+target))
		patch(target, map[string]any{"title": "Elsewhere"})
		served("the link gone through the edge", "/s/"+linker, func(s int, body string) bool { return s == 200 && !strings.Contains(body, "/s/"+target) })
	})
	t.Run("unshare", func(t *testing.T) {
		edgeGet(t, base, "/api/notes/"+hot)
		one.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]any{"cuid": hot}}).Expect(t, 200, "")
		served("unshare through the edge", "/api/notes/"+hot, gone)
	})
	t.Run("expiry", func(t *testing.T) {
		at := time.Now().Add(3 * time.Second).Truncate(time.Second)
		id := publishJSON(t, one, acc.Token, map[string]any{"content": "short-lived", "expires_at": at.Format(time.RFC3339)})
		served("the note", "/api/notes/"+id, has("short-lived"))
		time.Sleep(time.Until(at))
		served("expiry through the edge", "/api/notes/"+id, gone)
	})
	t.Run("an edge outage", func(t *testing.T) {
		id := publishJSON(t, one, acc.Token, map[string]any{"content": "before the outage"})
		served("the note", "/api/notes/"+id, has("before the outage"))
		purges.stop()
		patch(id, map[string]any{"content": "during the outage"})
		time.Sleep(1500 * time.Millisecond)
		if _, body, _ := edgeGet(t, base, "/api/notes/"+id); !strings.Contains(body, "before the outage") {
			t.Fatalf("the edge changed while no purge reached it: %s", body)
		}
		purges.start(t)
		served("the purge after the outage", "/api/notes/"+id, has("during the outage"))
	})
	t.Run("a PURGE from outside the ACL", func(t *testing.T) {
		client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
		req, _ := http.NewRequest("PURGE", base+"/", nil)
		req.Header.Set("Purge-All", "true")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("PURGE from 127.0.0.2: %d, want 403", resp.StatusCode)
		}
	})
}

// clientFrom is an HTTP client whose connections come from the loopback address ip.
func clientFrom(ip string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}}
}

// getFrom reads url with c and returns the status, the body and the headers.
func getFrom(t *testing.T, c *http.Client, url string, header http.Header) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	maps.Copy(req.Header, header)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// publishDomain publishes a note of account through the domain, past the API's rate
// limits, and returns its cuid.
func publishDomain(t *testing.T, s *testkit.Server, account, title, content string) string {
	t.Helper()
	p, err := testkit.Must(s.App.Deps().Publisher()).Publish(context.Background(), account, note.Draft{Content: content, Title: &title, ShowProperties: true})
	if err != nil {
		t.Fatal(err)
	}
	return p.CUID
}

// TestE2EEdgeKeys: through Varnish with the shipped VCL, a page is purged with the notes
// it embeds and links to, hard where the change hides something (an unshared embed, hidden
// properties are never served from the edge's grace), a page over the cap of 64 note keys
// carries its author's key, and surrogate keys go only to the edge (SHARE_EDGE_ADDRESSES),
// not to a reader who calls the ingress directly.
func TestE2EEdgeKeys(t *testing.T) {
	st := startEdgeStack(t)
	base, one := st.base, st.one
	acc := one.NewAccount(t, "edgekeys")
	patch := func(id string, body map[string]any) {
		one.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: acc.Token, JSON: body}).Expect(t, 200, "")
	}
	// warm reads path through the edge until it shows text, then once more: a hit.
	warm := func(t *testing.T, path, text string) {
		t.Helper()
		within(t, time.Now(), 2*time.Second, "warm "+path, func() bool {
			s, body, _ := edgeGet(t, base, path)
			return s == 200 && strings.Contains(body, text)
		})
		if _, body, h := edgeGet(t, base, path); h.Get("X-Cache") != "HIT" || !strings.Contains(body, text) {
			t.Fatalf("%s: X-Cache %q after a read, want a hit showing %q", path, h.Get("X-Cache"), text)
		}
	}
	// never reads path through the edge 100 times, from 1 s after a change, and fails on
	// every read that still shows text.
	never := func(t *testing.T, name string, changed time.Time, path, text string) {
		t.Helper()
		time.Sleep(time.Until(changed.Add(time.Second)))
		shown := 0
		for range 100 {
			if s, body, _ := edgeGet(t, base, path); s == 200 && strings.Contains(body, text) {
				shown++
			}
			time.Sleep(20 * time.Millisecond)
		}
		if shown > 0 {
			t.Errorf("%s: %d of 100 reads from 1 s after the change still showed %q", name, shown, text)
		}
	}
	// Each note's names purge the author's pages twice: let that pass before the pages
	// are warmed, so that only the change under test purges them.
	settle := func() { time.Sleep(1500 * time.Millisecond) }

	t.Run("a page embedding a note that is unshared", func(t *testing.T) {
		embedded := publishJSON(t, one, acc.Token, map[string]any{"content": "embedded secret body", "title": "Embedded One"})
		page := publishJSON(t, one, acc.Token, map[string]any{"content": "before\n\n![[Embedded One]]\n\nafter", "title": "Embedder"})
		settle()
		warm(t, "/s/"+page, "embedded secret body")
		changed := time.Now()
		one.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]any{"cuid": embedded}}).Expect(t, 200, "")
		never(t, "the unshared embed", changed, "/s/"+page, "embedded secret body")
	})
	t.Run("an embedded note's expiry moved", func(t *testing.T) {
		embedded := publishJSON(t, one, acc.Token, map[string]any{"content": "soon gone body", "title": "Embedded Two"})
		page := publishJSON(t, one, acc.Token, map[string]any{"content": "![[Embedded Two]]", "title": "Embedder Two"})
		settle()
		warm(t, "/s/"+page, "soon gone body")
		changed := time.Now()
		patch(embedded, map[string]any{"expires_at": time.Now().Add(2 * time.Second).Format(time.RFC3339Nano)})
		time.Sleep(2 * time.Second)
		never(t, "the expired embed", changed.Add(2*time.Second), "/s/"+page, "soon gone body")
	})
	t.Run("a page linking to a note that is retitled", func(t *testing.T) {
		target := publishJSON(t, one, acc.Token, map[string]any{"content": "target", "title": "Old Name"})
		linker := publishJSON(t, one, acc.Token, map[string]any{"content": "to [[Old Name]] and [[New Name]]", "title": "Linker"})
		settle()
		// [[Old Name]] leads to the target; [[New Name]] leads nowhere yet.
		warm(t, "/s/"+linker, `href="`+one.URL+"/s/"+target+`"`)
		if _, body, _ := edgeGet(t, base, "/s/"+linker); strings.Count(body, "/s/"+target) != 1 {
			t.Fatalf("the linker before the retitle links the target %d times, want once", strings.Count(body, "/s/"+target))
		}
		changed := time.Now()
		patch(target, map[string]any{"title": "New Name"})
		// Now [[New Name]] leads to the target and [[Old Name]] nowhere: the new title's link.
		within(t, changed, time.Second, "the new title's link through the edge", func() bool {
			_, body, _ := edgeGet(t, base, "/s/"+linker)
			return strings.Contains(body, "New Name</a>")
		})
	})
	t.Run("properties hidden", func(t *testing.T) {
		id := publishJSON(t, one, acc.Token, map[string]any{"content": "with properties", "title": "Props",
			"properties": map[string]any{"secretprop": "hidden-value-42"}})
		settle()
		warm(t, "/api/notes/"+id, "hidden-value-42")
		changed := time.Now()
		patch(id, map[string]any{"show_properties": false})
		never(t, "hidden properties", changed, "/api/notes/"+id, "hidden-value-42")
	})
	t.Run("a page over the cap of 64 note keys", func(t *testing.T) {
		var body strings.Builder
		var last string
		for i := range 70 { // Past the API's rate limit: through the domain.
			last = publishDomain(t, one, acc.UserCUID, "Many "+strconv.Itoa(i), "many")
			body.WriteString("[[Many " + strconv.Itoa(i) + "]] ")
		}
		page := publishJSON(t, one, acc.Token, map[string]any{"content": body.String(), "title": "Hub"})
		_, _, h := getFrom(t, clientFrom(edgeFrom), "http://"+st.ingress+"/s/"+page, nil)
		var notes, authors int
		for _, k := range strings.Fields(h.Get("Surrogate-Key")) {
			switch k[0] {
			case 'a':
				authors++
			default:
				notes++
			}
		}
		if notes != 64 || authors != 1 {
			t.Errorf("Surrogate-Key of a page linking to 70 notes: %d note keys and %d author keys, want 64 and 1 (%q)", notes, authors, h.Get("Surrogate-Key"))
		}
		settle()
		warm(t, "/s/"+page, "/s/"+last)
		changed := time.Now()
		one.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]any{"cuid": last}}).Expect(t, 200, "")
		never(t, "the unshared 70th link", changed, "/s/"+page, "/s/"+last)
	})
	t.Run("surrogate keys only for the edge", func(t *testing.T) {
		id := publishDomain(t, one, acc.UserCUID, "Keys", "keys")
		url := "http://" + st.ingress + "/s/" + id
		if _, _, h := getFrom(t, clientFrom(edgeFrom), url, nil); h.Get("Surrogate-Key") == "" || h.Get("Surrogate-Control") == "" {
			t.Errorf("the edge's read: Surrogate-Key %q, Surrogate-Control %q; want both", h.Get("Surrogate-Key"), h.Get("Surrogate-Control"))
		}
		for _, c := range []struct {
			name   string
			client *http.Client
			header http.Header
		}{
			{"a reader at the ingress", clientFrom("127.0.0.2"), nil},
			{"a reader at the ingress naming the edge", clientFrom("127.0.0.2"), http.Header{"X-Forwarded-For": {edgeFrom}}},
			{"a reader at the ingress from the ingress's own address", clientFrom("127.0.0.1"), nil},
		} {
			s, _, h := getFrom(t, c.client, url, c.header)
			if s != 200 || h.Get("Surrogate-Key") != "" || h.Get("Surrogate-Control") != "" {
				t.Errorf("%s: %d, Surrogate-Key %q, Surrogate-Control %q; want 200 and neither", c.name, s, h.Get("Surrogate-Key"), h.Get("Surrogate-Control"))
			}
		}
	})
}
