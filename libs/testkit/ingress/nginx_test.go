package ingress_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit/ingress"
)

// nginxRouter is the routing part of an nginx server block: what `location = P` and
// `location ~ R` blocks proxy to, matched the way nginx matches them (an exact location
// first, then regular expressions in order, then the catch-all prefix `/`).
type nginxRouter struct {
	exact   map[string]string
	regexes []struct {
		re     *regexp.Regexp
		target string
	}
	fallback string
}

var locationBlock = regexp.MustCompile(`(?m)^\s*location (=|~) (\S+) \{\n\s*proxy_pass ([^;]+);\n\s*\}`)

func parseNginx(t *testing.T, conf string) *nginxRouter {
	t.Helper()
	r := &nginxRouter{exact: map[string]string{}}
	for _, m := range locationBlock.FindAllStringSubmatch(conf, -1) {
		if m[1] == "=" {
			if _, dup := r.exact[m[2]]; dup {
				t.Fatalf("location = %s appears twice", m[2])
			}
			r.exact[m[2]] = m[3]
			continue
		}
		r.regexes = append(r.regexes, struct {
			re     *regexp.Regexp
			target string
		}{regexp.MustCompile(m[2]), m[3]})
	}
	if !strings.Contains(conf, "location / {") {
		t.Fatal("no catch-all location /")
	}
	r.fallback = "404"
	return r
}

// route returns where nginx sends path, and how many regex locations match it.
func (r *nginxRouter) route(path string) (string, int) {
	if target, ok := r.exact[path]; ok {
		return target, 0
	}
	var target string
	matches := 0
	for _, x := range r.regexes {
		if x.re.MatchString(path) {
			if matches == 0 {
				target = x.target
			}
			matches++
		}
	}
	if matches == 0 {
		return r.fallback, 0
	}
	return target, matches
}

// concretePaths fills a table path's parameters with sample values, including ones with a
// dot and a dash, which a segment pattern must accept; a parameter inside a segment keeps
// the segment's literal prefix (/@:handle: /@h), and a *catch-all takes sample rests: the
// empty one, escapes ("+" and "%2B" are different names), a folder named "-" (%2D) and
// the site's own views.
func concretePaths(p string) []string {
	out := []string{""}
	for _, seg := range strings.Split(p, "/")[1:] {
		var alts []string
		switch literal, _, param := strings.Cut(seg, ":"); {
		case param:
			for _, v := range []string{"abc", "tz4a98xxat96iws9zmbrgj3a", "one.png", "a-b_c.d", "h"} {
				alts = append(alts, literal+v)
			}
		case strings.HasPrefix(seg, "*"):
			alts = []string{"", "a/C%2B%2B", "a/C++", "%2D/x", "-/tags/x"}
		default:
			alts = []string{seg}
		}
		var next []string
		for _, o := range out {
			for _, a := range alts {
				next = append(next, o+"/"+a)
			}
		}
		out = next
	}
	return out
}

func upstreamAddr(target string) string { return target + ".internal:8080" }

func TestNginxRoutesEveryTablePathToItsService(t *testing.T) {
	conf := ingress.Server("8080", upstreamAddr)
	r := parseNginx(t, conf)
	for _, rt := range routes.Table {
		for _, p := range concretePaths(rt.Path) {
			t.Run(rt.Method+" "+p, func(t *testing.T) {
				target, n := r.route(p)
				if want := "http://" + ingress.Upstream(rt.Target); target != want {
					t.Fatalf("nginx sends %s to %s, want %s (%s)", p, target, want, rt.Target)
				}
				if n > 1 {
					t.Fatalf("%s matches %d regex locations; the order of locations would matter", p, n)
				}
			})
		}
	}
}

// An ingress routes by path only, so every method of a path must reach one target.
func TestEveryPathHasOneTarget(t *testing.T) {
	owner := map[string]string{}
	for _, r := range routes.Table {
		if s, ok := owner[r.Path]; ok && s != r.Target {
			t.Errorf("%s is served by both %s and %s", r.Path, s, r.Target)
		}
		owner[r.Path] = r.Target
	}
}

func TestNginxAnswers404ForEveryOtherPath(t *testing.T) {
	r := parseNginx(t, ingress.Server("8080", upstreamAddr))
	for _, p := range []string{
		"/", "/api", "/api/", "/api/notes", "/api/notes/", "/api/notes/a/b", "/api/notes//versions",
		"/api/user/settings/", "/api/user/settingsx", "/API/publish", "/api/publish/x",
		"/api/images/u/n", "/api/images/u/n/f/g", "/api/og/", "/s/", "/s/a/b",
		"/healthz", "/readyz", "/metrics", "/debug/pprof/", "/api/healthz",
		// A site's handle is never empty, and "@" starts a site only as the first character.
		"/@", "/@/", "/@/x", "/x@h", "/x@h/a", "/api/@h", "/s/@h/a", "/assets/@h/a",
	} {
		if target, _ := r.route(p); target != "404" {
			t.Errorf("nginx sends %s to %s, want the catch-all 404", p, target)
		}
	}
}

func TestNginxServerHasOneUpstreamPerService(t *testing.T) {
	conf := ingress.Server("8080", upstreamAddr)
	for _, s := range routes.Targets {
		want := fmt.Sprintf("upstream %s {\n    server %s;", ingress.Upstream(s), upstreamAddr(s))
		if !strings.Contains(conf, want) {
			t.Errorf("no upstream for %s (%q)", s, want)
		}
	}
	for _, want := range []string{
		"listen 8080;",
		"proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
		"proxy_set_header X-Request-ID $sharenote_request_id;",
		"proxy_set_header Host $host;",
		`return 404 '{"error":"not_found","message":"Not found."}';`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("the server lacks %s", want)
		}
	}
}

func TestNginxBodyLimitLetsTheServicesAnswerOversizedBodies(t *testing.T) {
	m := regexp.MustCompile(`^(\d+)m$`).FindStringSubmatch(ingress.BodyLimit)
	if m == nil {
		t.Fatalf("BodyLimit %q is not NNm", ingress.BodyLimit)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	for _, r := range routes.Table {
		// A multipart body at the limit carries boundaries and part headers on top; a
		// megabyte of headroom keeps nginx's own (non-JSON) 413 out of the way.
		if r.MaxBody+1<<20 > n<<20 {
			t.Errorf("%s %s accepts %d bytes; the ingress's %s leaves no headroom", r.Method, r.Path, r.MaxBody, ingress.BodyLimit)
		}
	}
}

func TestPathRegexp(t *testing.T) {
	cases := []struct{ path, want string }{
		{"/api/publish", `^/api/publish$`},
		{"/api/notes/:cuid", `^/api/notes/[^/]+$`},
		{"/api/notes/:cuid/versions/:version", `^/api/notes/[^/]+/versions/[^/]+$`},
		{"/api/openapi.json", `^/api/openapi\.json$`},
		{"/@:handle", `^/@[^/]+$`},
		{"/@:handle/*path", `^/@[^/]+/(?s:.*)$`},
		{"/x.y:id/z", `^/x\.y[^/]+/z$`},
	}
	for _, c := range cases {
		if got := ingress.PathRegexp(c.path); got != c.want {
			t.Errorf("PathRegexp(%q) = %q, want %q", c.path, got, c.want)
		}
	}
	// Each expression matches what gin (routes.Match) matches, no more, no less.
	site, bare := regexp.MustCompile(ingress.PathRegexp(routes.SitePage.Path)), regexp.MustCompile(ingress.PathRegexp(routes.SiteBare.Path))
	for p, want := range map[string][2]bool{
		"/@h/": {true, false}, "/@h/a/C%2B%2B": {true, false}, "/@h/-/tags/x": {true, false}, "/@h/a\nb": {true, false},
		"/@h": {false, true}, "/@Alice": {false, true},
		"/@": {false, false}, "/@/": {false, false}, "/@/x": {false, false}, "/x@h/": {false, false}, "/@h//": {true, false},
	} {
		got := [2]bool{site.MatchString(p), bare.MatchString(p)}
		gin := [2]bool{routes.Match(routes.SitePage.Path, p), routes.Match(routes.SiteBare.Path, p)}
		if got != want || gin != want {
			t.Errorf("%q: the regexes of SitePage and SiteBare match %v, gin %v; want %v", p, got, gin, want)
		}
	}
}

// TestNginxPassesTheRequestURIOn: every proxy_pass names an upstream and nothing else.
// With a URI part (even "/"), nginx would send the upstream its own encoding of the
// decoded, normalised path instead of the client's, and "%2B", which a site path tells
// from "+", would arrive as "+".
func TestNginxPassesTheRequestURIOn(t *testing.T) {
	conf := ingress.Server("8080", upstreamAddr)
	passes := regexp.MustCompile(`proxy_pass ([^;]*);`).FindAllStringSubmatch(conf, -1)
	if len(passes) == 0 {
		t.Fatal("no proxy_pass")
	}
	upstream := regexp.MustCompile(`^http://sharenote_[a-z_]+$`)
	for _, m := range passes {
		if !upstream.MatchString(m[1]) {
			t.Errorf("proxy_pass %s: want http://<upstream> without a URI part", m[1])
		}
	}
}

// TestNginxAcceptsTheGeneratedConfig runs `nginx -t` on the complete configuration when
// nginx is installed (Debian: apt-get install nginx); .ci/run installs it.
func TestNginxAcceptsTheGeneratedConfig(t *testing.T) {
	bin := ingress.NginxBinary()
	if bin == "" {
		t.Skip("nginx not installed: apt-get install nginx")
	}
	dir := t.TempDir()
	conf := ingress.Config(ingress.Options{
		Listen: "127.0.0.1:8080", // nginx -t does not bind it
		Addr:   func(string) string { return "127.0.0.1:1" },
		Dir:    dir,
	})
	file := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-t", "-q", "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", file).CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -t rejects the generated configuration: %v\n%s\n%s", err, out, conf)
	}
}

// TestNginxSendsTheRequestURIAsTheClientWroteIt runs nginx (when installed) with the
// generated configuration in front of a server that records each request's target as it
// arrives: escapes, "+" and query strings reach the targets exactly as the client wrote
// them, site paths as much as the API's.
func TestNginxSendsTheRequestURIAsTheClientWroteIt(t *testing.T) {
	bin := ingress.NginxBinary()
	if bin == "" {
		t.Skip("nginx not installed: apt-get install nginx")
	}
	var mu sync.Mutex
	var seen []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.RequestURI)
		mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(upstream.Close)
	listen := startNginx(t, bin, strings.TrimPrefix(upstream.URL, "http://"))

	for _, target := range []string{
		"/@h/a/C%2B%2B", "/@h/a/C++", "/@h/a/C%2b%2b", "/@h/%2D/x%2Fy", "/@h/-/tags/x", "/@h/",
		"/@Alice/a/C%2B%2B?utm_source=x&q=a%2Bb+c", "/@h", "/%40h/x",
		"/s/a%2Bb", "/api/images/u/n/a%20b+c.png", "/api/notes/x?q=%2b",
	} {
		mu.Lock()
		before := len(seen)
		mu.Unlock()
		status := rawGet(t, listen, target)
		mu.Lock()
		reached := append([]string(nil), seen[before:]...)
		mu.Unlock()
		if status != http.StatusOK || len(reached) != 1 || reached[0] != target {
			t.Errorf("GET %s: %d, reached the target as %q; want 200, unchanged", target, status, reached)
		}
	}
}

// startNginx runs nginx with Config on a free loopback port, every target at addr, until
// the test ends, and returns the address it listens on.
func startNginx(t *testing.T, bin, addr string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := l.Addr().String()
	l.Close()
	// nginx's workers drop root for an unprivileged user, which must be able to enter the
	// directory of the temporary files: t.TempDir() is private to its owner.
	dir, err := os.MkdirTemp("", "sharenote-ingress-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	o := ingress.Options{Listen: listen, Addr: func(string) string { return addr }, Dir: dir}
	if os.Geteuid() == 0 {
		group := "nobody"
		if _, err := user.LookupGroup("nogroup"); err == nil {
			group = "nogroup"
		}
		o.User = "nobody " + group
	}
	file := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(file, []byte(ingress.Config(o)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", file)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", listen); err == nil {
			c.Close()
			return listen
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not listen on %s within 10 s:\n%s", listen, b)
		}
	}
}

// rawGet sends GET target to addr exactly as written (no client escapes or unescapes it)
// and returns the status.
func rawGet(t *testing.T, addr, target string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, addr); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
