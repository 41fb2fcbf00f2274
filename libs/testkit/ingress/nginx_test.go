package ingress_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

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
// dot and a dash, which a segment pattern must accept.
func concretePaths(p string) []string {
	var out []string
	for _, v := range []string{"abc", "tz4a98xxat96iws9zmbrgj3a", "one.png", "a-b_c.d"} {
		segs := strings.Split(p, "/")
		for i, s := range segs {
			if strings.HasPrefix(s, ":") {
				segs[i] = v
			}
		}
		out = append(out, strings.Join(segs, "/"))
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
	}
	for _, c := range cases {
		if got := ingress.PathRegexp(c.path); got != c.want {
			t.Errorf("PathRegexp(%q) = %q, want %q", c.path, got, c.want)
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
