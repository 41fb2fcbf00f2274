package readcache

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Entry is a cached public read. Entries are shared between readers: never modify one
// after handing it to the cache.
type Entry struct {
	// NotFound marks a negative entry: the publication is unknown, expired or unpublished.
	NotFound bool
	Body     []byte
	// Open streams the body, n bytes from offset off (n < 0: to the end), of an entry too
	// large to hold (or held compressed by the cache): Body is then nil and Size is the
	// body's length.
	Open        func(ctx context.Context, off, n int64) (io.ReadCloser, error)
	Size        int64
	ContentType string
	// Encoding is the Content-Encoding of Body: "" (identity), "gzip" or "br".
	Encoding string
	// ETag is the representation's strong validator, quoted.
	ETag string
	// ExpiresAt is the publication's expiry; from then on the edge answers 404 without
	// asking the database.
	ExpiresAt *time.Time
	// StaleAt is when the entry goes stale though nothing was changed: the publication
	// links to a note that expires then. From then on it is loaded again.
	StaleAt *time.Time
	// Noindex asks search engines not to index the read.
	Noindex bool
	// Header holds further response headers (the page's Content-Security-Policy).
	Header [][2]string
	// Note and Owner are the publication and account whose changes drop the entry, and
	// Embeds the other publications whose renders it shows (a page's embeds): a change of
	// one of them drops it too. Links are the publications its links lead to (a page's),
	// for the edge's keys.
	Note, Owner string
	Embeds      []string
	Links       []string
	// Unchanged, when set, tells with one cheap read whether a new load would build the
	// same entry (a page's sources unchanged: note.View.Unchanged), so that a stale
	// entry is kept without loading it again.
	Unchanged func(ctx context.Context) (bool, error)

	loadedAt time.Time
	epoch    uint64 // The cache's drop count when the load began.
	// loaded marks an entry Load took (not a variant Derive made of one), and kept one
	// that a load kept because nothing it shows changed: rebuilds.go follows these.
	loaded, kept bool
	// packed is the body gzip-compressed, for an entry the cache keeps compressed; Open
	// then unpacks it.
	packed []byte
	// headers are the response headers made of the fields above, built when the cache
	// takes the entry; nil on an entry it never took.
	headers *headerSet
}

// headerSet is an entry's response headers under their canonical names: meta goes with
// every answer (304 included), body with the whole body.
type headerSet struct{ meta, body []header }

// header is one response header. Its value slice is shared by every response that
// serves the entry: net/http only reads it, and a handler that changes the header
// replaces the slice.
type header struct {
	key   string
	value []string
}

// SetHeaders sets on h the entry's own response headers: its Header pairs, ETag and
// X-Robots-Tag (noindex), and with body also Content-Type, Content-Encoding and
// Content-Length. An entry the cache holds made them once, so a read allocates nothing
// here.
func (e *Entry) SetHeaders(h http.Header, body bool) {
	hs := e.headers
	if hs == nil {
		hs = e.buildHeaders()
	}
	for _, x := range hs.meta {
		h[x.key] = x.value
	}
	if body {
		for _, x := range hs.body {
			h[x.key] = x.value
		}
	}
}

func (e *Entry) buildHeaders() *headerSet {
	hs := &headerSet{}
	add := func(to *[]header, k, v string) { *to = append(*to, header{http.CanonicalHeaderKey(k), []string{v}}) }
	for _, kv := range e.Header {
		add(&hs.meta, kv[0], kv[1])
	}
	add(&hs.meta, "ETag", e.ETag)
	if e.Noindex {
		add(&hs.meta, "X-Robots-Tag", "noindex")
	}
	add(&hs.body, "Content-Type", e.ContentType)
	if e.Encoding != "" {
		add(&hs.body, "Content-Encoding", e.Encoding)
	}
	add(&hs.body, "Content-Length", strconv.FormatInt(e.Len(), 10))
	return hs
}

// Expired reports whether the publication had expired at now.
func (e *Entry) Expired(now time.Time) bool {
	return e.ExpiresAt != nil && !now.Before(*e.ExpiresAt)
}

// MaxAge returns how long a client may keep the entry from now: at most limit, and not
// past the publication's expiry or the entry's going stale.
func (e *Entry) MaxAge(now time.Time, limit time.Duration) time.Duration {
	for _, t := range []*time.Time{e.ExpiresAt, e.StaleAt} {
		if t != nil {
			limit = min(limit, t.Sub(now))
		}
	}
	return max(limit, 0)
}

// size is what the entry counts against the byte bound: its body and headers, plus the
// bookkeeping around it.
func (e *Entry) size(key string) int64 {
	n := int64(len(e.Body)+len(e.packed)+len(e.ContentType)+len(e.ETag)+len(e.Note)+len(e.Owner)) + 3*int64(len(key)) + 256
	for _, id := range e.Embeds {
		n += int64(len(id) + len(key))
	}
	for _, id := range e.Links {
		n += int64(len(id))
	}
	for _, h := range e.Header {
		n += int64(len(h[0]) + len(h[1]))
	}
	return n
}

// Reusing returns a copy of e that serves old's bytes: for a load that found old's
// validator unchanged, with e's current expiry, owner and indexing.
func (e *Entry) Reusing(old *Entry) *Entry {
	c := *e
	c.Body, c.Open, c.Size, c.ContentType, c.Encoding, c.ETag, c.Header = old.Body, old.Open, old.Size, old.ContentType, old.Encoding, old.ETag, old.Header
	c.packed = old.packed
	return &c
}

// Kept returns a copy of e, for a load that found that nothing e shows changed.
func (e *Entry) Kept() *Entry {
	c := *e
	c.kept = true
	return &c
}

// Len is the length of the body, held or streamed.
func (e *Entry) Len() int64 {
	if e.Body == nil && e.Open != nil {
		return e.Size
	}
	return int64(len(e.Body))
}

// WriteBody writes the whole body to w: the held bytes, or those Open streams (a body
// the cache keeps compressed is unpacked on the way).
func (e *Entry) WriteBody(ctx context.Context, w io.Writer) (int64, error) {
	if e.Body != nil || e.Open == nil {
		n, err := w.Write(e.Body)
		return int64(n), err
	}
	rc, err := e.Open(ctx, 0, -1)
	if err != nil {
		return 0, err
	}
	defer func() { _ = rc.Close() }()
	return io.Copy(w, rc)
}

// packable reports whether e is a body worth keeping compressed when it is too large to
// keep as it is: text not compressed yet.
func (e *Entry) packable() bool {
	t := e.ContentType
	return e.Body != nil && e.Encoding == "" &&
		(strings.HasPrefix(t, "text/") || strings.Contains(t, "json") || strings.Contains(t, "xml") || strings.Contains(t, "javascript"))
}

// pack returns a copy of e that holds its body gzip-compressed and streams it unpacked.
// Fast compression: it runs in the load that readers wait for.
func (e *Entry) pack() *Entry {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = w.Write(e.Body)
	_ = w.Close()
	c := *e
	packed := bytes.Clone(buf.Bytes())
	c.Body, c.Size, c.packed = nil, int64(len(e.Body)), packed
	c.Open = func(_ context.Context, off, n int64) (io.ReadCloser, error) { return unpack(packed, off, n) }
	return &c
}

// unpack streams n bytes (n < 0: all) from offset off of the body packed.
func unpack(packed []byte, off, n int64) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, fmt.Errorf("unpack cached body: %w", err)
	}
	if _, err := io.CopyN(io.Discard, zr, off); err != nil {
		return nil, fmt.Errorf("unpack cached body: %w", err)
	}
	if n < 0 {
		return zr, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(zr, n), zr}, nil
}

// unpacked returns a copy of e that holds its body, for making variants of it.
func (e *Entry) unpacked() (*Entry, error) {
	if e.packed == nil {
		return e, nil
	}
	c := *e
	var buf bytes.Buffer
	buf.Grow(int(e.Size))
	if _, err := e.WriteBody(context.Background(), &buf); err != nil {
		return nil, err
	}
	c.Body, c.Open, c.Size, c.packed = buf.Bytes(), nil, 0, nil
	return &c, nil
}

// refreshed returns a copy of e loaded at t in epoch, by Load or not, with its response
// headers made.
func (e *Entry) refreshed(t time.Time, epoch uint64, loaded bool) *Entry {
	c := *e
	c.loadedAt, c.epoch, c.loaded = t, epoch, loaded
	c.headers = c.buildHeaders()
	return &c
}
