package readcache_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/readcache"
)

func TestACachedEntrySetsItsHeadersWithoutAllocating(t *testing.T) {
	c := readcache.New(1<<20, trusted, time.Now, prometheus.NewRegistry())
	e := &readcache.Entry{Body: []byte("body"), ContentType: "text/html; charset=utf-8", ETag: `"v1"`, Noindex: true,
		Header: [][2]string{{"content-security-policy", "default-src 'none'"}}}
	got, err := c.Load(context.Background(), "k", func(context.Context, *readcache.Entry) (*readcache.Entry, error) { return e, nil })
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	got.SetHeaders(h, false)
	if h.Get("Content-Type") != "" || h.Get("Content-Length") != "" {
		t.Errorf("without the body: %v", h)
	}
	got.SetHeaders(h, true)
	want := http.Header{"Etag": {`"v1"`}, "X-Robots-Tag": {"noindex"}, "Content-Security-Policy": {"default-src 'none'"},
		"Content-Type": {"text/html; charset=utf-8"}, "Content-Length": {"4"}}
	if len(h) != len(want) {
		t.Errorf("headers %v, want %v", h, want)
	}
	for k, v := range want {
		if strings.Join(h[k], ",") != v[0] {
			t.Errorf("%s = %q, want %q", k, h[k], v[0])
		}
	}
	if n := testing.AllocsPerRun(100, func() { got.SetHeaders(h, true) }); n != 0 {
		t.Errorf("a cached entry allocates %v times to set its headers", n)
	}
	// An entry the cache never took makes them on the spot.
	fresh := http.Header{}
	e.SetHeaders(fresh, true)
	if fresh.Get("Content-Length") != "4" || fresh.Get("Etag") != `"v1"` {
		t.Errorf("an entry outside the cache: %v", fresh)
	}
}
