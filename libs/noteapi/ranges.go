package noteapi

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/readcache"
)

// MaxRanges is the most byte ranges an image read answers with 206, counted after
// overlapping and adjacent ranges are merged. A request for more gets the whole image
// with 200 (RFC 9110 §14.2 lets a server ignore Range): many ranges cost a part header
// each and, on an object store, were once a GetObject each.
const MaxRanges = 8

// byteRange is the bytes [start, end) of a body.
type byteRange struct{ start, end int64 }

var (
	// errBadRange is a Range header in bytes that does not parse; it is answered 416
	// (as net/http's ServeContent did).
	errBadRange = errors.New("malformed Range header")
	// errUnsatisfiable is a Range header none of whose ranges overlaps the body.
	errUnsatisfiable = errors.New("no range overlaps the body")
)

// parseRange parses the value of a Range header for a body of size bytes (RFC 9110
// §14.1.2: bytes=a-b, a-, -suffix, separated by commas with optional white space, empty
// list elements allowed). It returns the satisfiable ranges in ascending order with
// overlapping and adjacent ones merged, or nil when the header names another range unit,
// which must be ignored. Ranges that start past the end, and an empty suffix, are
// dropped; errUnsatisfiable when none is left.
func parseRange(header string, size int64) ([]byteRange, error) {
	unit, set, ok := strings.Cut(header, "=")
	if !ok {
		return nil, errBadRange
	}
	if !strings.EqualFold(strings.Trim(unit, " \t"), "bytes") {
		return nil, nil
	}
	var rs []byteRange
	specs := 0
	for spec := range strings.SplitSeq(set, ",") {
		spec = strings.Trim(spec, " \t")
		if spec == "" {
			continue
		}
		specs++
		r, satisfiable, err := parseSpec(spec, size)
		if err != nil {
			return nil, err
		}
		if satisfiable {
			rs = append(rs, r)
		}
	}
	if specs == 0 {
		return nil, errBadRange
	}
	if len(rs) == 0 {
		return nil, errUnsatisfiable
	}
	return mergeRanges(rs), nil
}

// parseSpec parses one range of a Range header (a-b, a- or -suffix) for a body of size
// bytes; satisfiable is false for a range that starts past the end and for an empty
// suffix.
func parseSpec(spec string, size int64) (r byteRange, satisfiable bool, err error) {
	first, last, ok := strings.Cut(spec, "-")
	if !ok {
		return byteRange{}, false, errBadRange
	}
	if first == "" {
		n, ok := parseDigits(last)
		if !ok {
			return byteRange{}, false, errBadRange
		}
		return byteRange{max(size-n, 0), size}, n > 0 && size > 0, nil
	}
	a, ok := parseDigits(first)
	if !ok {
		return byteRange{}, false, errBadRange
	}
	b := int64(math.MaxInt64)
	if last != "" {
		if b, ok = parseDigits(last); !ok || b < a {
			return byteRange{}, false, errBadRange
		}
	}
	return byteRange{a, min(b, size-1) + 1}, a < size, nil
}

// mergeRanges sorts rs, which is not empty, and merges its overlapping and adjacent
// ranges.
func mergeRanges(rs []byteRange) []byteRange {
	slices.SortFunc(rs, func(x, y byteRange) int { return cmp.Compare(x.start, y.start) })
	merged := rs[:1]
	for _, r := range rs[1:] {
		last := &merged[len(merged)-1]
		if r.start <= last.end {
			last.end = max(last.end, r.end)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// parseDigits parses a non-empty run of ASCII digits (no sign, no space); a number past
// int64 saturates, which makes a first position unsatisfiable and a last position or a
// suffix the end of the body.
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return math.MaxInt64, true
	}
	return n, true
}

// strongMatch implements If-Match's and If-Range's strong comparison: a list of quoted
// tags or "*" (If-Range takes a single tag). A weak tag never matches.
func strongMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || t == etag && !strings.HasPrefix(t, "W/") {
			return true
		}
	}
	return false
}

// serveRanges answers e's body, whole or in ranges (RFC 9110 §14): If-Match (412), If-Range
// (an entity tag that must match strongly; a date never matches, as images have no
// Last-Modified), Range (206 with Content-Range, several ranges as multipart/byteranges,
// at most MaxRanges after merging, else the whole body with 200), and 416 with the
// API's JSON error for a range that does not overlap the body. The caller has answered
// If-None-Match and set the other headers; edge keeps the entry's Surrogate-Key (a read
// that came through the edge).
//
// A streamed body (e.Open) is opened once per request, at the first byte needed, and
// read forward: gaps between ranges are read and dropped, never opened anew. It is
// opened before the status is written, so that a store that cannot serve it answers
// 503 rather than a cut response. A HEAD request opens nothing.
func serveRanges(c *gin.Context, e *readcache.Entry, edge bool) {
	h := c.Writer.Header()
	h["Accept-Ranges"] = acceptBytes
	if im := c.GetHeader("If-Match"); im != "" && !strongMatch(im, e.ETag) {
		refuse(c, errs.New(http.StatusPreconditionFailed, errs.PreconditionFailed, "If-Match does not match the image's ETag."))
		return
	}
	if e.Body != nil && c.GetHeader("Range") == "" {
		// The whole body, held in memory (most reads): nothing to frame, nothing to open.
		setHeaders(h, e, true, edge)
		c.Status(http.StatusOK)
		_, _ = e.WriteBody(c.Request.Context(), c.Writer)
		return
	}
	open, size := bodyOf(e)
	ranges, status, ok := selectRanges(c, e.ETag, size)
	if !ok {
		return
	}
	parts, length, err := frameRanges(h, ranges, status, size)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	if c.Request.Method == http.MethodHead {
		c.Status(status)
		return
	}
	first, last := ranges[0], ranges[len(ranges)-1]
	rc, err := open(c.Request.Context(), first.start, last.end-first.start)
	if err != nil {
		h.Del("Content-Length")
		h.Del("Content-Range")
		refuse(c, err)
		return
	}
	defer rc.Close()
	c.Status(status)
	if parts == nil {
		_, _ = io.CopyN(c.Writer, rc, length)
		return
	}
	// A failed read leaves the body shorter than its Content-Length: net/http then closes
	// the connection, and the client sees the cut.
	_ = writeParts(c.Writer, rc, parts.Boundary(), ranges, e.ContentType, size)
}

// acceptBytes is the Accept-Ranges of every image read, shared as readcache.Entry's
// header values are.
var acceptBytes = []string{"bytes"}

// bodyOf opens e's body from an offset, whether e streams it or holds it, and tells its
// size.
func bodyOf(e *readcache.Entry) (open func(ctx context.Context, off, n int64) (io.ReadCloser, error), size int64) {
	if e.Open != nil {
		return e.Open, e.Size
	}
	body := e.Body
	return func(_ context.Context, off, n int64) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(body[off : off+n])), nil
	}, int64(len(body))
}

// selectRanges is what the request asks of a body of size bytes: the whole body with 200,
// or the ranges of its Range header with 206 when If-Range allows them and there are at
// most MaxRanges. A Range header that is malformed or does not overlap the body is
// answered 416 here, and ok is false.
func selectRanges(c *gin.Context, etag string, size int64) (ranges []byteRange, status int, ok bool) {
	whole := []byteRange{{0, size}}
	header := c.GetHeader("Range")
	if header == "" || c.GetHeader("If-Range") != "" && !strongMatch(c.GetHeader("If-Range"), etag) {
		return whole, http.StatusOK, true
	}
	rs, err := parseRange(header, size)
	if err != nil {
		c.Writer.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
		refuse(c, errs.New(http.StatusRequestedRangeNotSatisfiable, errs.RangeNotSatisfiable, "The requested range does not overlap the image."))
		return nil, 0, false
	}
	if len(rs) > 0 && len(rs) <= MaxRanges {
		return rs, http.StatusPartialContent, true
	}
	return whole, http.StatusOK, true
}

// frameRanges sets the headers that frame the answer of ranges of a body of size bytes:
// Content-Range for one range answered 206, a multipart/byteranges Content-Type for
// several. It returns the multipart writer whose boundary the parts take (nil for a
// single part) and the length of the answer's body.
func frameRanges(h http.Header, ranges []byteRange, status int, size int64) (parts *multipart.Writer, length int64, err error) {
	length = ranges[0].end - ranges[0].start
	switch {
	case status == http.StatusPartialContent && len(ranges) == 1:
		h.Set("Content-Range", contentRange(ranges[0], size))
	case len(ranges) > 1:
		parts = multipart.NewWriter(io.Discard)
		if err := parts.SetBoundary(boundary()); err != nil {
			return nil, 0, err
		}
		length = multipartLength(parts.Boundary(), ranges, h.Get("Content-Type"), size)
		h.Set("Content-Type", "multipart/byteranges; boundary="+parts.Boundary())
	}
	return parts, length, nil
}

// refuse answers err through errs.Middleware, without the body's Content-Type.
func refuse(c *gin.Context, err error) {
	c.Writer.Header().Del("Content-Type")
	errs.Abort(c, err)
}

func contentRange(r byteRange, size int64) string {
	return fmt.Sprintf("bytes %d-%d/%d", r.start, r.end-1, size)
}

// boundary returns a random multipart boundary.
func boundary() string {
	var b [15]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// multipartLength is the length of the multipart/byteranges body writeParts writes.
func multipartLength(boundary string, ranges []byteRange, contentType string, size int64) int64 {
	var n countingWriter
	mw := multipart.NewWriter(&n)
	_ = mw.SetBoundary(boundary)
	for _, r := range ranges {
		_, _ = mw.CreatePart(partHeader(r, contentType, size))
		n += countingWriter(r.end - r.start)
	}
	_ = mw.Close()
	return int64(n)
}

// writeParts writes ranges as a multipart/byteranges body, reading them from src, which
// starts at the first range's first byte.
func writeParts(w io.Writer, src io.Reader, boundary string, ranges []byteRange, contentType string, size int64) error {
	mw := multipart.NewWriter(w)
	_ = mw.SetBoundary(boundary)
	at := ranges[0].start
	for _, r := range ranges {
		if _, err := io.CopyN(io.Discard, src, r.start-at); err != nil {
			return err
		}
		part, err := mw.CreatePart(partHeader(r, contentType, size))
		if err != nil {
			return err
		}
		if _, err := io.CopyN(part, src, r.end-r.start); err != nil {
			return err
		}
		at = r.end
	}
	return mw.Close()
}

func partHeader(r byteRange, contentType string, size int64) textproto.MIMEHeader {
	return textproto.MIMEHeader{"Content-Range": {contentRange(r, size)}, "Content-Type": {contentType}}
}

// countingWriter counts the bytes written to it.
type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}
