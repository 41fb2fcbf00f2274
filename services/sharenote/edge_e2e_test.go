//go:build e2e

package sharenote_test

// The edge end to end (`make e2e`): Varnish (Debian's varnish and varnish-modules) with
// deploy/varnish/sharenote.vcl in front of the split e2e's nginx ingress (when nginx is
// installed), in front of a round-robin proxy that counts what reaches the origin, in front
// of two all-in-one replicas on Postgres and Redis.

import (
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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
		o.mu.Lock()
		o.count[r.In.URL.Path]++
		o.mu.Unlock()
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return o, l.Addr().String()
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
	addr, to string
	mu       sync.Mutex
	l        net.Listener
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
				u, err := net.Dial("tcp", r.to)
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

func TestE2EEdgeVarnish(t *testing.T) {
	bin, err := exec.LookPath("varnishd")
	if err != nil {
		t.Skip("varnishd not installed: apt-get install varnish varnish-modules")
	}
	b := testkit.PostgresBackend(t)
	edgeAddr, purgeAddr := testkit.FreeAddr(), testkit.FreeAddr()
	opts := []testkit.Option{testkit.WithEnv("SHARE_EDGE_PURGE_URLS", "http://"+purgeAddr), testkit.WithClock(testkit.WallClock())}
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
	startVarnish(t, bin, edgeAddr, originAddr)
	purges := &relay{addr: purgeAddr, to: edgeAddr}
	purges.start(t)
	t.Cleanup(purges.stop)
	base := "http://" + edgeAddr
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
