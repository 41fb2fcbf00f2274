package noteapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/edge"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/readcache"
	"github.com/sharenote/sharenote/libs/routes"
)

// MaxPublicAge bounds how long a public read may be cached (docs/api.md "Limits").
const MaxPublicAge = 60 * time.Second

// Public answers the public reads (note JSON, page, preview PNG, images) from the
// per-process read cache: a read of a cached note costs a map lookup and a write.
type Public struct {
	cache *readcache.Cache
	now   func() time.Time
	edge  *Edge
}

// NewPublic returns the public reads over cache, reading time from now, with the headers
// of edge (nil: no edge is configured).
func NewPublic(cache *readcache.Cache, now func() time.Time, edge *Edge) *Public {
	return &Public{cache: cache, now: now, edge: edge}
}

// Read is one public read.
type Read struct {
	// Route and ID name the read in the cache: its row of the routes table and the cuid
	// (or the image's path below the route).
	Route *routes.Route
	ID    string
	// Compress offers gzip and brotli variants (text); images and PNGs are sent as they are.
	Compress bool
	// Ranges answers Range requests (images), also of entries that stream their body.
	Ranges bool
	// NotFound answers for an unknown, expired or unpublished publication.
	NotFound func(*gin.Context)
	// Load builds the entry from the database: a negative entry (NotFound) for a
	// publication that is not active, or an entry reusing the bytes of stale (the entry
	// the cache had, nil when none) when its validator would be stale's.
	Load func(ctx context.Context, stale *readcache.Entry) (*readcache.Entry, error)
}

// Serve answers r: from the cache when its entry is fresh, else after one load however
// many readers ask at once. Cache-Control is public with a max-age of at most 60 s and at
// most the seconds left before expiry; If-None-Match gets 304; an expired publication is
// 404 from the moment it expires, without a database query.
func (p *Public) Serve(c *gin.Context, r Read) {
	enc := ""
	if r.Compress {
		enc = Negotiate(c.GetHeader("Accept-Encoding"))
	}
	// One string holds both keys: the variant's, and the base entry's as its prefix.
	variant := r.Route.Path + "\x00" + r.ID + "\x00" + enc
	key := variant[:len(variant)-len(enc)]
	e, ok := p.cache.Get(variant)
	if !ok {
		base, err := p.cache.Load(c.Request.Context(), key, p.edge.load(r.Load))
		if err != nil {
			errs.Abort(c, err)
			return
		}
		e = base
		if enc != "" && !base.NotFound {
			e = p.cache.Derive(variant, base, VariantTag(base.ETag, enc), func(b *readcache.Entry) *readcache.Entry {
				return compress(b, enc)
			})
		}
	}
	now := p.now()
	edge := p.edge.through(c.Request)
	if e.NotFound || e.Expired(now) {
		if edge && e.Note != "" {
			// The edge keeps a 404 briefly; a note made active again purges it at once.
			c.Header(surrogateKey, p.edge.Keys.Content(e.Note))
		}
		r.NotFound(c)
		return
	}
	// Canonical names and shared value slices: a cached read sets its headers without
	// allocating (readcache.Entry.SetHeaders).
	h := c.Writer.Header()
	setHeaders(h, e, false, edge)
	h["Cache-Control"] = cacheControl(e.MaxAge(now, MaxPublicAge))
	if edge {
		h.Set("Surrogate-Control", p.edge.control(e, now))
	}
	if r.Compress {
		h["Vary"] = varyEncoding
	}
	if ETagMatches(c.GetHeader("If-None-Match"), e.ETag) {
		c.Status(http.StatusNotModified)
		return
	}
	if r.Ranges {
		h.Set("Content-Type", e.ContentType)
		serveRanges(c, e, edge)
		return
	}
	setHeaders(h, e, true, edge)
	c.Status(http.StatusOK)
	_, _ = e.WriteBody(c.Request.Context(), c.Writer) // A large body the cache keeps compressed is unpacked on the way.
}

// fullAge and varyEncoding are header values most public reads send, made once and
// shared as readcache.Entry.SetHeaders shares its own.
var (
	fullAge      = []string{"public, max-age=" + strconv.Itoa(int(MaxPublicAge/time.Second))}
	varyEncoding = []string{"Accept-Encoding"}
)

// cacheControl is the Cache-Control of a public read a client may keep for age.
func cacheControl(age time.Duration) []string {
	if age == MaxPublicAge {
		return fullAge
	}
	return []string{"public, max-age=" + strconv.Itoa(int(age/time.Second))}
}

// Entry returns the cache entry of an active publication's public read.
func Entry(v note.View, etag, contentType string, body []byte) *readcache.Entry {
	return &readcache.Entry{Body: body, ContentType: contentType, ETag: etag, ExpiresAt: v.ExpiresAt, StaleAt: v.LinksExpireAt,
		Noindex: !v.Owner.Indexable, Note: v.CUID, Owner: v.AccountCUID, Embeds: v.Embeds, Links: v.Linked,
		Unchanged: v.Unchanged}
}

// Missing is the negative entry of a publication that is not active.
func Missing(cuid string) *readcache.Entry {
	return &readcache.Entry{NotFound: true, Note: cuid}
}

// Tag returns a quoted strong validator derived from parts: everything a representation
// depends on (route, the publication's etag, the owner's settings, the renderer's
// version). It is computed once per load, never from the body per request.
func Tag(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// SettingsTag is the part of a validator that the owner's settings make, each field
// separated so that no two settings give the same part.
func SettingsTag(v note.View) string {
	s := v.Owner
	return strings.Join([]string{s.Name, strconv.FormatBool(s.ShowAuthor), s.Theme, s.AccentColor, s.Font, strconv.FormatBool(s.Indexable)}, "\x00")
}

// VariantTag is the validator of base's variant in encoding enc.
func VariantTag(base, enc string) string {
	return strings.TrimSuffix(base, `"`) + "-" + enc + `"`
}

// Negotiate picks the content encoding for an Accept-Encoding header: brotli, else gzip,
// else identity (""). A coding with q=0 is refused; "*" accepts both.
func Negotiate(header string) string {
	if header == "" {
		return ""
	}
	var br, gz bool
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
				continue
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "br":
			br = true
		case "gzip":
			gz = true
		case "*":
			br, gz = true, true
		}
	}
	switch {
	case br:
		return "br"
	case gz:
		return "gzip"
	default:
		return ""
	}
}

// compress returns base's variant in enc.
func compress(base *readcache.Entry, enc string) *readcache.Entry {
	e := *base
	e.Body, e.Encoding, e.ETag = Encode(base.Body, enc), enc, VariantTag(base.ETag, enc)
	return &e
}

// Encode returns body in the content encoding enc, "br" or "gzip". Variants are made once
// per change of what they encode (a publication, an asset), so they use strong settings.
func Encode(body []byte, enc string) []byte {
	var buf bytes.Buffer
	if enc == "br" {
		w := brotli.NewWriterLevel(&buf, 6)
		_, _ = w.Write(body)
		_ = w.Close()
	} else {
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = w.Write(body)
		_ = w.Close()
	}
	return buf.Bytes()
}

// ETagMatches implements If-None-Match's weak comparison over a list of tags or "*".
func ETagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// ViewRead is a public read of one representation of a publication's view: the note's
// JSON, its page, its preview card. A target makes one per route when it starts, from
// its own methods, and answers each request with Public.ServeView.
type ViewRead struct {
	Route *routes.Route
	// Compress offers gzip and brotli variants (text).
	Compress bool
	// NotFound answers for an unknown, expired or unpublished publication.
	NotFound func(*gin.Context)
	// View reads the view (note.Reader's ReadView, or ReadPage for a read that shows its
	// links; note.Cards' ReadCard): note.ErrNotFound when the publication is not active.
	View func(ctx context.Context, cuid string) (note.View, error)
	// Tag is the validator of the representation of v: everything it depends on (Tag).
	Tag func(v note.View) string
	// Build makes the entry of v, with the validator etag (Entry).
	Build func(ctx context.Context, v note.View, etag string) (*readcache.Entry, error)
}

// ServeView answers the read r of publication cuid from the cache (Serve).
func (p *Public) ServeView(c *gin.Context, cuid string, r ViewRead) {
	load := func(ctx context.Context, stale *readcache.Entry) (*readcache.Entry, error) {
		return r.load(ctx, cuid, stale)
	}
	p.Serve(c, Read{Route: r.Route, ID: cuid, Compress: r.Compress, NotFound: r.NotFound, Load: load})
}

// load builds the entry of the read r of publication cuid over stale (the entry the
// cache had, nil when none). It keeps stale when the entry can tell that nothing it
// shows changed (Entry.Unchanged: a page's sources); else it reads the view, answers a
// negative entry when the publication is not active, reuses stale's bytes when the
// validator is stale's (nothing the bytes show has changed), and otherwise builds the
// entry.
func (r ViewRead) load(ctx context.Context, cuid string, stale *readcache.Entry) (*readcache.Entry, error) {
	if stale != nil && stale.Unchanged != nil {
		same, err := stale.Unchanged(ctx)
		if err != nil {
			return nil, err
		}
		if same {
			return stale.Kept(), nil
		}
	}
	v, err := r.View(ctx, cuid)
	if errors.Is(err, note.ErrNotFound) {
		return Missing(cuid), nil
	}
	if err != nil {
		return nil, err
	}
	etag := r.Tag(v)
	if stale != nil && !stale.NotFound && stale.ETag == etag {
		return Entry(v, "", "", nil).Reusing(stale), nil
	}
	return r.Build(ctx, v, etag)
}

// NotFoundJSON answers a public read of an API route for a publication that is not there.
func NotFoundJSON(c *gin.Context) { errs.Abort(c, errs.NotFoundError()) }

// Edge is what public reads tell an operator's edge (docs/deployment.md "The edge").
type Edge struct {
	// Keys make the Surrogate-Key header, from the entry's note, embeds and links.
	Keys *edge.Keys
	// Through reports whether a request came through the edge (SHARE_EDGE_ADDRESSES):
	// only such a read carries Surrogate-Key and Surrogate-Control.
	Through func(*http.Request) bool
	// MaxAge is the edge's lifetime of a read (Surrogate-Control), cut to the entry's
	// expiry and going stale.
	MaxAge time.Duration
}

// edgeGrace is how long an edge may serve a read past its lifetime while it fetches the
// new one (stale-while-revalidate), or after a soft purge; a read whose lifetime an
// expiry cut gets none, so that an expired note is never served.
const edgeGrace = 30 * time.Second

// surrogateKey is Surrogate-Key as net/http stores it.
var surrogateKey = http.CanonicalHeaderKey("Surrogate-Key")

// through reports whether r came through the edge; never without one.
func (d *Edge) through(r *http.Request) bool { return d != nil && d.Through(r) }

// setHeaders sets e's own headers on h (readcache.Entry.SetHeaders), without its
// Surrogate-Key unless the read came through the edge.
func setHeaders(h http.Header, e *readcache.Entry, body, edge bool) {
	e.SetHeaders(h, body)
	if !edge {
		delete(h, surrogateKey)
	}
}

// load wraps a Read's Load so that the entries it builds carry their Surrogate-Key
// (edge.Keys.Header), which Serve sends only to the edge.
func (d *Edge) load(load func(context.Context, *readcache.Entry) (*readcache.Entry, error)) func(context.Context, *readcache.Entry) (*readcache.Entry, error) {
	if d == nil {
		return load
	}
	return func(ctx context.Context, stale *readcache.Entry) (*readcache.Entry, error) {
		e, err := load(ctx, stale)
		if err != nil || e.NotFound {
			return e, err
		}
		// The entry may share its Header with stale's: a new slice, never an append.
		hdr := make([][2]string, 0, len(e.Header)+1)
		for _, kv := range e.Header {
			if kv[0] != surrogateKey {
				hdr = append(hdr, kv)
			}
		}
		e.Header = append(hdr, [2]string{surrogateKey, d.Keys.Header(e.Note, e.Owner, e.Embeds, e.Links)})
		return e, nil
	}
}

// control is the Surrogate-Control of e at now: max-age up to MaxAge and never past
// expiry, and a grace only when no expiry cut it.
func (d *Edge) control(e *readcache.Entry, now time.Time) string {
	age := e.MaxAge(now, d.MaxAge+edgeGrace)
	if age < d.MaxAge+edgeGrace {
		return "max-age=" + strconv.Itoa(int(min(age, d.MaxAge)/time.Second))
	}
	return "max-age=" + strconv.Itoa(int(d.MaxAge/time.Second)) + ", stale-while-revalidate=" + strconv.Itoa(int(edgeGrace/time.Second))
}
