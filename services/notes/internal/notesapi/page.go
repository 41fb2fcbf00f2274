package notesapi

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/lru"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/services/notes/internal/page"
)

// Page answers GET /s/:cuid with the rendered note, or the small 404 page.
func (a *API) Page(c *gin.Context) {
	p, s, err := a.published(c)
	if errors.Is(err, note.ErrNotFound) {
		writeHeaders(c, page.NotFound.CSP)
		c.Header("Cache-Control", "no-store")
		c.Data(http.StatusNotFound, "text/html; charset=utf-8", page.NotFound.HTML)
		return
	}
	if err != nil {
		errs.Abort(c, err)
		return
	}
	pg, err := a.pages.get(p, s, func() (page.Page, error) {
		d := page.Data{Title: deref(p.Title), Summary: deref(p.Summary), Published: p.CreatedAt, Updated: p.UpdatedAt,
			Markdown: p.Content, Theme: s.Theme, Accent: s.AccentColor, Font: s.Font, URL: a.notes.URL(p.CUID),
			ImageURL: a.notes.PublicURL() + "/api/og/" + p.CUID + ".png", Noindex: !s.Indexable}
		if s.ShowAuthor {
			d.Author = s.Name
		}
		if p.ShowProperties {
			d.Properties = p.Properties
		}
		return page.Render(d)
	})
	if err != nil {
		errs.Abort(c, errs.Internal(err))
		return
	}
	writeHeaders(c, pg.CSP)
	noteapi.ServePublic(c, p, a.notes.Now(), s.Indexable, "text/html; charset=utf-8", "", pg.HTML)
}

// pageCache keeps rendered pages: a page changes only when its publication or its owner's
// settings do, and rendering (highlighting above all) costs milliseconds.
type pageCache struct {
	cache   *lru.Cache[page.Page]
	renders prometheus.Counter
}

func newPageCache(reg prometheus.Registerer) *pageCache {
	c := &pageCache{
		cache: lru.New(1024, 64<<20, func(p page.Page) int64 { return int64(len(p.HTML) + len(p.CSP)) }),
		renders: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sharenote_page_renders_total", Help: "Note pages rendered; cache hits are not counted."}),
	}
	reg.MustRegister(c.renders)
	return c
}

// get returns the cached page of p as its owner's settings s show it, or renders it. The
// key holds the update time and every field drawn from the publication and the settings.
func (c *pageCache) get(p note.Publication, s account.Settings, render func() (page.Page, error)) (page.Page, error) {
	h := sha256.New()
	for _, v := range []string{p.CUID, strconv.FormatInt(p.UpdatedAt.UnixMilli(), 10), s.Name, s.Theme, s.AccentColor, s.Font,
		strconv.FormatBool(s.ShowAuthor), strconv.FormatBool(s.Indexable)} {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	key := string(h.Sum(nil))
	if pg, ok := c.cache.Get(key); ok {
		return pg, nil
	}
	pg, err := render()
	if err != nil {
		return page.Page{}, err
	}
	c.renders.Inc()
	c.cache.Add(key, pg)
	return pg, nil
}

// writeHeaders sets the page's security headers.
func writeHeaders(c *gin.Context, csp string) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
