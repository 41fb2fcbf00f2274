package images_test

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/testkit"
)

// countGets puts a loopback proxy that counts object reads (GetObject, the GET requests)
// between the server and the object store of backend b, when that is S3; the file store of
// the embedded default is read in-process, where there is nothing to count: nil.
func countGets(t *testing.T, b testkit.Backend) ([]testkit.Option, *atomic.Int64) {
	u, err := url.Parse(b.BlobEnv["SHARE_BLOB_URL"])
	if err != nil || u.Scheme != "s3" {
		return nil, nil
	}
	q := u.Query()
	var gets atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: q.Get("endpoint")})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		proxy.ServeHTTP(w, r) // The Host header stays the proxy's, which the request is signed for.
	}))
	t.Cleanup(srv.Close)
	q.Set("endpoint", strings.TrimPrefix(srv.URL, "http://"))
	u.RawQuery = q.Encode()
	return []testkit.Option{testkit.WithEnv("SHARE_BLOB_URL", u.String())}, &gets
}

// part is one range of a 206 answer: its first byte and its bytes.
type part struct {
	start int
	data  []byte
}

// parts returns the ranges of a 206 answer, single or multipart/byteranges, checking each
// part's Content-Range against size.
func parts(t *testing.T, resp *testkit.Response, size int) []part {
	t.Helper()
	parse := func(cr string) (start, end int) {
		var total int
		if _, err := fmt.Sscanf(cr, "bytes %d-%d/%d", &start, &end, &total); err != nil || total != size {
			t.Fatalf("Content-Range %q, want bytes a-b/%d", cr, size)
		}
		return start, end
	}
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	if mt != "multipart/byteranges" {
		start, end := parse(resp.Header.Get("Content-Range"))
		if len(resp.Body) != end-start+1 {
			t.Fatalf("Content-Range %d-%d with %d bytes", start, end, len(resp.Body))
		}
		return []part{{start, resp.Body}}
	}
	var out []part
	mr := multipart.NewReader(bytes.NewReader(resp.Body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ct := p.Header.Get("Content-Type"); ct != "image/png" {
			t.Errorf("part Content-Type %q, want image/png", ct)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		start, end := parse(p.Header.Get("Content-Range"))
		if len(data) != end-start+1 {
			t.Fatalf("part %d-%d with %d bytes", start, end, len(data))
		}
		out = append(out, part{start, data})
	}
}

// oneByteRanges is a Range header of n disjoint one-byte ranges, every other byte.
func oneByteRanges(n int) string {
	specs := make([]string, n)
	for i := range specs {
		specs[i] = fmt.Sprintf("%d-%d", 2*i, 2*i)
	}
	return "bytes=" + strings.Join(specs, ",")
}

// TestManyRangesCostOneRead: however many ranges a request names, the image is read from
// the object store once (one GetObject on S3), front to back; overlapping and adjacent
// ranges are merged, and more than noteapi.MaxRanges after merging get the whole image.
func TestManyRangesCostOneRead(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		proxied, gets := countGets(t, b)
		clock := testkit.NewClock()
		f := &fixture{Server: testkit.StartServer(t, b, targets, append(proxied, testkit.WithClock(clock))...), clock: clock}
		acc := f.NewAccount(t, "owner")
		small, large := testkit.PNGOfSize(t, 40_000), testkit.PNGOfSize(t, 3_000_000)
		_, paths := f.publish(t, acc, nil, image{"small.png", "image/png", small}, image{"large.png", "image/png", large})
		etag := f.get(t, paths[0], nil).Expect(t, http.StatusOK, "").Header.Get("ETag")
		largeETag := f.get(t, paths[1], nil).Expect(t, http.StatusOK, "").Header.Get("ETag")

		type want struct{ start, end int } // inclusive, as in Content-Range
		cases := []struct {
			name   string
			header map[string]string
			status int
			ranges func(size int) []want // of a 206
		}{
			{"4,213 one-byte ranges get the whole image with 200", map[string]string{"Range": oneByteRanges(4213)}, http.StatusOK, nil},
			{"more ranges than MaxRanges after merging get the whole image with 200",
				map[string]string{"Range": oneByteRanges(noteapi.MaxRanges + 1)}, http.StatusOK, nil},
			{"MaxRanges disjoint ranges get 206 with as many parts",
				map[string]string{"Range": oneByteRanges(noteapi.MaxRanges)}, http.StatusPartialContent, func(int) []want {
					var w []want
					for i := range noteapi.MaxRanges {
						w = append(w, want{2 * i, 2 * i})
					}
					return w
				}},
			{"overlapping and adjacent ranges merge into one range",
				map[string]string{"Range": "bytes=20-29, 10-19,15-25"}, http.StatusPartialContent, func(int) []want { return []want{{10, 29}} }},
			{"a few ranges are parts in ascending order, merged",
				map[string]string{"Range": "bytes=-10,30000-30099,0-9,5-14,,1000-1999,2000-2000"}, http.StatusPartialContent, func(size int) []want {
					return []want{{0, 14}, {1000, 2000}, {30000, 30099}, {size - 10, size - 1}}
				}},
			{"an open range reads to the end", map[string]string{"Range": "bytes=39990-"}, http.StatusPartialContent,
				func(size int) []want { return []want{{39990, size - 1}} }},
			{"a suffix longer than the image is all of it", map[string]string{"Range": "bytes=-99999999"}, http.StatusPartialContent,
				func(size int) []want { return []want{{0, size - 1}} }},
			{"another range unit is ignored", map[string]string{"Range": "items=0-5"}, http.StatusOK, nil},
			{"a range past the end is 416", map[string]string{"Range": "bytes=99999999-"}, http.StatusRequestedRangeNotSatisfiable, nil},
			{"an empty suffix is 416", map[string]string{"Range": "bytes=-0"}, http.StatusRequestedRangeNotSatisfiable, nil},
			{"a malformed range is 416", map[string]string{"Range": "bytes=5-1"}, http.StatusRequestedRangeNotSatisfiable, nil},
			{"If-Range with another ETag gets the whole image",
				map[string]string{"Range": "bytes=0-9", "If-Range": `"other"`}, http.StatusOK, nil},
			{"If-Range with a date gets the whole image (images have no Last-Modified)",
				map[string]string{"Range": "bytes=0-9", "If-Range": "Fri, 27 Nov 2026 10:00:00 GMT"}, http.StatusOK, nil},
			{"If-Range with the image's ETag gets the range",
				map[string]string{"Range": "bytes=0-9", "If-Range": "ETAG"}, http.StatusPartialContent, func(int) []want { return []want{{0, 9}} }},
			{"If-Match with another ETag is 412", map[string]string{"If-Match": `"other"`}, http.StatusPreconditionFailed, nil},
		}
		for i, data := range [][]byte{small, large} {
			for _, c := range cases {
				t.Run(fmt.Sprintf("%d bytes: %s", len(data), c.name), func(t *testing.T) {
					header := map[string]string{}
					for k, v := range c.header {
						header[k] = strings.ReplaceAll(v, "ETAG", []string{etag, largeETag}[i])
					}
					if gets != nil {
						gets.Store(0)
					}
					resp := f.get(t, paths[i], header)
					// A held image (at most 1 MiB) is not read from the store; a streamed one
					// once, unless the request is refused.
					wantGets := int64(i)
					if c.status >= 400 {
						wantGets = 0
					}
					if gets != nil && gets.Load() != wantGets {
						t.Errorf("the object was read %d times, want %d", gets.Load(), wantGets)
					}
					switch c.status {
					case http.StatusOK:
						resp.Expect(t, http.StatusOK, "")
						if !bytes.Equal(resp.Body, data) {
							t.Errorf("200 with %d bytes that differ from the image's %d", len(resp.Body), len(data))
						}
					case http.StatusPartialContent:
						resp.Expect(t, http.StatusPartialContent, "")
						got := parts(t, resp, len(data))
						w := c.ranges(len(data))
						if len(got) != len(w) {
							t.Fatalf("%d parts, want %d: %v", len(got), len(w), w)
						}
						for j, p := range got {
							if p.start != w[j].start || len(p.data) != w[j].end-w[j].start+1 || !bytes.Equal(p.data, data[w[j].start:w[j].end+1]) {
								t.Errorf("part %d starts at %d with %d bytes, want bytes %d-%d of the image", j, p.start, len(p.data), w[j].start, w[j].end)
							}
						}
					case http.StatusRequestedRangeNotSatisfiable:
						resp.Expect(t, c.status, "range_not_satisfiable")
						if cr := resp.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes */%d", len(data)) {
							t.Errorf("Content-Range = %q, want bytes */%d", cr, len(data))
						}
					default:
						resp.Expect(t, c.status, "precondition_failed")
					}
				})
			}
		}
	})
}
