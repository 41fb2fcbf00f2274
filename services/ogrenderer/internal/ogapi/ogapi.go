// Package ogapi serves GET /api/og/:file, the social preview PNG of a publication.
package ogapi

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/lru"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/services/ogrenderer/internal/ogcard"
)

// Site is the name drawn in the corner of every card.
const Site = "sharenote"

// Cache bounds: a card is about 50 kB, so the entry bound is the one that usually holds.
const (
	cacheEntries = 256
	cacheBytes   = 50 << 20
)

// API draws and serves preview cards. Drawn PNGs are kept in an in-process LRU cache
// keyed by everything the picture depends on, so a card is drawn again only after the
// note or its owner's settings change (or it was evicted); concurrent requests for the
// same card wait for one drawing.
type API struct {
	notes    *note.Core
	settings *account.SettingsCore
	renderer *ogcard.Renderer
	cache    *lru.Cache[[]byte]
	flight   singleflight.Group
	renders  prometheus.Counter
	hits     prometheus.Counter
}

// New returns the API with its metrics registered on reg.
func New(notes *note.Core, settings *account.SettingsCore, reg prometheus.Registerer) (*API, error) {
	r, err := ogcard.NewRenderer()
	if err != nil {
		return nil, err
	}
	a := &API{notes: notes, settings: settings, renderer: r, cache: lru.New[[]byte](cacheEntries, cacheBytes, lru.Bytes),
		renders: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sharenote_og_renders_total",
			Help: "PNG previews drawn; cache hits are not counted.",
		}),
		hits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sharenote_og_cache_hits_total",
			Help: "PNG previews served without drawing: from the cache or from a drawing another request was waiting for.",
		}),
	}
	for _, c := range []prometheus.Collector{a.renders, a.hits} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("og metrics: %w", err)
		}
	}
	return a, nil
}

// Image answers the preview of an active publication. :file must be "<cuid>.png".
func (a *API) Image(c *gin.Context) {
	id, ok := strings.CutSuffix(c.Param("file"), ".png")
	if !ok || !cuid.Valid(id) {
		errs.Abort(c, errs.NotFoundError())
		return
	}
	ctx := c.Request.Context()
	p, err := a.notes.Read(ctx, id)
	if err != nil {
		errs.Abort(c, noteapi.Error(err))
		return
	}
	prof, err := a.settings.Get(ctx, p.AccountCUID)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	card := cardFor(p, prof.Settings)
	key := cacheKey(p, card)
	body, err := a.png(key, card)
	if err != nil {
		errs.Abort(c, errs.Internal(err))
		return
	}
	noteapi.ServePublic(c, p, a.notes.Now(), prof.Settings.Indexable, "image/png", hex.EncodeToString([]byte(key[:16])), body)
}

// png returns the card's PNG from the cache, or draws it once however many requests ask
// for it at the same time.
func (a *API) png(key string, card ogcard.Card) ([]byte, error) {
	if b, ok := a.cache.Get(key); ok {
		a.hits.Inc()
		return b, nil
	}
	drew := false
	v, err, _ := a.flight.Do(key, func() (any, error) {
		// A request that just finished drawing may have filled the cache between the Get
		// above and this call.
		if b, ok := a.cache.Get(key); ok {
			return b, nil
		}
		drew = true
		b, err := a.renderer.PNG(card)
		if err != nil {
			return nil, err
		}
		a.renders.Inc()
		a.cache.Add(key, b)
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	if !drew {
		a.hits.Inc()
	}
	return v.([]byte), nil
}

// cardFor is what the preview of p shows with its owner's settings: the author only when the
// owner shows it, the dark palette only for the dark theme ("system" has no reader to
// ask, so it is light), and the default accent should a stored colour not parse. The font
// setting is not drawn: the card always uses the embedded Go fonts, which have no serif.
func cardFor(p note.Publication, s account.Settings) ogcard.Card {
	c := ogcard.Card{Site: Site, Dark: s.Theme == "dark"}
	if p.Title != nil {
		c.Title = *p.Title
	}
	if p.Summary != nil {
		c.Summary = *p.Summary
	}
	if s.ShowAuthor {
		c.Author = s.Name
	}
	accent, err := ogcard.ParseColor(s.AccentColor)
	if err != nil {
		accent, _ = ogcard.ParseColor(account.DefaultSettings("").AccentColor)
	}
	c.Accent = accent
	return c
}

// cacheKey is the SHA-256 (as raw bytes in a string) of everything the picture depends
// on: the drawing's version, the publication and when it last changed, and the card's
// contents, which carry every setting that shows (author, theme, accent). The text is
// part of the key as well as the update time, so that two changes within one
// millisecond still draw anew. Fields are length-prefixed, so no two cards share a key.
func cacheKey(p note.Publication, c ogcard.Card) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(fmt.Sprint(ogcard.Version))
	field(p.CUID)
	field(p.UpdatedAt.UTC().Format("2006-01-02T15:04:05.000000000Z"))
	field(c.Title)
	field(c.Summary)
	field(c.Author)
	field(c.Site)
	field(fmt.Sprint(c.Dark))
	field(fmt.Sprintf("%02x%02x%02x", c.Accent.R, c.Accent.G, c.Accent.B))
	return string(h.Sum(nil))
}
