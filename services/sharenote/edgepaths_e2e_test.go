//go:build e2e

package sharenote_test

// The shipped VCL's path normalisation end to end (`make e2e`): Varnish with
// deploy/varnish/sharenote.vcl in front of a proxy that records the request line each
// request reaches the origin with, in front of the e2e's nginx ingress (when nginx is
// installed), in front of one all-in-one process.

import (
	"bufio"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/testkit/ingress"
)

// recorder is a proxy to one server that records each request's target as it arrived.
type recorder struct {
	mu     sync.Mutex
	target []string
}

// seen returns the targets the origin received, in order.
func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.target...)
}

func startRecorder(t *testing.T, server string) (*recorder, string) {
	r := &recorder{}
	to, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(p *httputil.ProxyRequest) {
		p.SetURL(to)
		r.mu.Lock()
		r.target = append(r.target, p.In.RequestURI)
		r.mu.Unlock()
	}}
	return r, serveLoopback(t, proxy)
}

// rawGet sends GET target to addr exactly as written (no client escapes or unescapes
// it) and returns the status and the headers.
func rawGet(t *testing.T, addr, target string) (int, http.Header) {
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
	return resp.StatusCode, resp.Header
}

// escape percent-encodes every byte of s, in upper- or lower-case hex.
func escape(s string, upper bool) string {
	format := "%%%02x"
	if upper {
		format = "%%%02X"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, format, s[i])
	}
	return b.String()
}

// TestE2EEdgeNormalisesPaths: spellings of one public read that differ only in
// percent-escapes of unreserved characters (either hex case) are one object at the edge,
// so that they cost the origin one request and take one object's room; escapes of other
// characters (%2B, %2F, %20, %25) are kept, their hex in upper case, and reach the origin
// as they were; query strings are not touched.
func TestE2EEdgeNormalisesPaths(t *testing.T) {
	bin, err := exec.LookPath("varnishd")
	if err != nil {
		t.Skip("varnishd not installed: apt-get install varnish varnish-modules")
	}
	// No purges: nothing but the path decides what the edge serves.
	s := start(t, testkit.SQLiteBackend(t), testkit.WithClock(testkit.WallClock()))
	// The recorder sees what the edge sends; the process answers what passed the ingress
	// after it (a site's 301 names the escaped path it got).
	origin := s.URL
	if nginx := ingress.NginxBinary(); nginx != "" {
		ingressAddr := testkit.FreeAddr()
		startNginx(t, nginx, ingressAddr, maps.Collect(func(yield func(string, string) bool) {
			for _, target := range routes.Targets {
				yield(target, strings.TrimPrefix(s.URL, "http://"))
			}
		}))
		origin = "http://" + ingressAddr
	}
	rec, originAddr := startRecorder(t, origin)
	edgeAddr := testkit.FreeAddr()
	startVarnish(t, bin, edgeAddr, originAddr)
	acc := s.NewAccount(t, "edgepaths")
	id := publishJSON(t, s, acc.Token, map[string]any{"content": "one page", "title": "One"})

	// get reads target through the edge and reports what reached the origin meanwhile.
	read := func(target string) (status int, h http.Header, reached []string) {
		t.Helper()
		before := len(rec.seen())
		status, h = rawGet(t, edgeAddr, target)
		return status, h, rec.seen()[before:]
	}
	get := func(target string) (int, string, []string) {
		t.Helper()
		status, h, reached := read(target)
		return status, h.Get("X-Cache"), reached
	}
	oneObject := func(name string, first string, others ...string) {
		t.Run(name, func(t *testing.T) {
			if status, _, reached := get(first); len(reached) != 1 {
				t.Fatalf("GET %s: %d, reached the origin as %q, want once", first, status, reached)
			}
			for _, other := range others {
				if status, cache, reached := get(other); cache != "HIT" || len(reached) != 0 {
					t.Errorf("GET %s after %s: %d, X-Cache %q, reached the origin as %q; want a hit", other, first, status, cache, reached)
				}
			}
		})
	}
	oneObject("a note's page", "/s/"+id,
		"/s/%"+fmt.Sprintf("%02x", id[0])+id[1:], // the issue's /s/%64…
		"/s/"+escape(id, true),
		"/s/"+escape(id[:3], false)+id[3:6]+escape(id[6:], true),
		"/%73/"+id)
	oneObject("a note's JSON", "/api/notes/"+id, "/api/notes/"+escape(id, false), "/api/%6Eotes/"+id)
	oneObject("an image (404s are kept 5 s)", "/api/images/"+id+"/x1/big.png",
		"/api/images/"+escape(id, false)+"/x1/big.png", "/api/images/"+id+"/%781/%62ig%2epng")
	oneObject("the unreserved punctuation", "/s/~-_.x", "/s/%7e%2D%5f%2E%78", "/s/%7E%2d%5F%2ex")
	oneObject("an escape that is kept, in either case", "/s/a%2Bb", "/s/a%2bb", "/%73/%61%2b%62")

	t.Run("reserved characters and the percent sign stay escaped", func(t *testing.T) {
		for target, want := range map[string]string{
			"/s/a%2bb%2fc%20d%25e":              "/s/a%2Bb%2Fc%20d%25e",
			"/s/%2541":                          "/s/%2541", // never decoded twice: not %41, not A
			"/api/images/x/y/a%2fb%2Bc%20d.png": "/api/images/x/y/a%2Fb%2Bc%20d.png",
			"/s/%e2%82%ac%3f%23%26":             "/s/%E2%82%AC%3F%23%26",
		} {
			if _, _, reached := get(target); len(reached) != 1 || reached[0] != want {
				t.Errorf("GET %s reached the origin as %q, want %q", target, reached, want)
			}
		}
	})
	t.Run("a read that passes keeps its query string as it was", func(t *testing.T) {
		if _, _, reached := get("/api/user/%73ettings?x=%61%2b"); len(reached) != 1 || reached[0] != "/api/user/settings?x=%61%2b" {
			t.Errorf("GET /api/user/%%73ettings?x=%%61%%2b reached the origin as %q, want /api/user/settings?x=%%61%%2b", reached)
		}
	})
	t.Run("a stray percent sign leaves the path as it is", func(t *testing.T) {
		// Decoding %31 next to "%4" would make a new escape, %41. The origin's HTTP server
		// refuses "%4%" before the recording proxy sees it.
		if status, _, reached := get("/s/%4%31"); status != http.StatusBadRequest || len(reached) != 0 {
			t.Errorf("GET /s/%%4%%31: %d, reached the origin as %q; want 400 from the origin's server, unchanged", status, reached)
		}
	})
	t.Run("a plus sign is not its escape", func(t *testing.T) {
		if status, cache, reached := get("/s/a+b"); cache == "HIT" || len(reached) != 1 || reached[0] != "/s/a+b" {
			t.Errorf("GET /s/a+b after /s/a%%2Bb: %d, X-Cache %q, reached the origin as %q; want a miss as /s/a+b", status, cache, reached)
		}
	})

	// A site's paths are read escaped by the service ("+" a space, "%2B" a "+", "%2D" a
	// folder named "-"): the edge and the ingress pass them on as they came (the edge's
	// as the recorder sees them, the ingress's as the Location of the process's 301 says),
	// and the edge keeps their 301s as pages. A handle in another case answers 301 to its
	// lowercase spelling whether the site exists or not.
	t.Run("a site's 301 keeps the escaped path through the edge and the ingress", func(t *testing.T) {
		status, h, reached := read("/@Alice/a/C%2B%2B")
		if status != http.StatusMovedPermanently || h.Get("Location") != "/@alice/a/C%2B%2B" || len(reached) != 1 || reached[0] != "/@Alice/a/C%2B%2B" {
			t.Fatalf("GET /@Alice/a/C%%2B%%2B: %d, Location %q, reached the origin as %q; want 301 to /@alice/a/C%%2B%%2B, reaching it unchanged",
				status, h.Get("Location"), reached)
		}
		if status, h, reached := read("/@Alice/a/C%2B%2B"); status != http.StatusMovedPermanently || h.Get("X-Cache") != "HIT" || len(reached) != 0 {
			t.Errorf("GET /@Alice/a/C%%2B%%2B again: %d, X-Cache %q, reached the origin as %q; want the 301 from the edge", status, h.Get("X-Cache"), reached)
		}
		if status, h, _ := read("/@Alice"); status != http.StatusMovedPermanently || h.Get("Location") != "/@alice/" {
			t.Errorf("GET /@Alice: %d, Location %q; want 301 to /@alice/", status, h.Get("Location"))
		}
	})
	t.Run("a site's path is never normalised", func(t *testing.T) {
		for _, target := range []string{
			"/@Alice/a/C++", "/@Alice/a/C%2b%2b", "/@Alice/%2D/x", "/@Alice/%2d/x", "/@Alice/-/tags/x", "/@Alice/%61+b", "/@Alice/a%2Fb%20c",
		} {
			status, h, reached := read(target)
			if len(reached) != 1 || reached[0] != target {
				t.Errorf("GET %s: %d, X-Cache %q, reached the origin as %q; want a miss, unchanged", target, status, h.Get("X-Cache"), reached)
			}
			if want := "/@alice" + strings.TrimPrefix(target, "/@Alice"); h.Get("Location") != want {
				t.Errorf("GET %s: Location %q, want %q", target, h.Get("Location"), want)
			}
		}
	})
	t.Run("a site's query keeps only q and cursor", func(t *testing.T) {
		status, h, reached := read("/@Alice/x?utm_source=a&q=b+c%2B&ref&cursor=2&qq=1")
		if len(reached) != 1 || reached[0] != "/@Alice/x?q=b+c%2B&cursor=2" || h.Get("Location") != "/@alice/x?q=b+c%2B&cursor=2" {
			t.Fatalf("GET /@Alice/x?utm_source=a&q=b+c%%2B&ref&cursor=2&qq=1: %d, Location %q, reached the origin as %q; want /@Alice/x?q=b+c%%2B&cursor=2",
				status, h.Get("Location"), reached)
		}
		for target, want := range map[string]string{
			"/@Alice/x?q=b+c%2B&utm_medium=y&cursor=2": "",          // the same object
			"/@Alice/x?utm_source=x":                   "/@Alice/x", // nothing left
			"/@Alice/x?cursor=3&q=b":                   "/@Alice/x?cursor=3&q=b",
		} {
			_, cache, reached := get(target)
			if want == "" && (cache != "HIT" || len(reached) != 0) || want != "" && (len(reached) != 1 || reached[0] != want) {
				t.Errorf("GET %s: X-Cache %q, reached the origin as %q; want %q (\"\": a hit)", target, cache, reached, want)
			}
		}
		if _, cache, reached := get("/@Alice/x"); cache != "HIT" || len(reached) != 0 {
			t.Errorf("GET /@Alice/x after ?utm_source=x: X-Cache %q, reached the origin as %q; want a hit", cache, reached)
		}
	})
}
