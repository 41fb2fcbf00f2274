package notes

import (
	"context"
	"html/template"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/readcache"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/notes/internal/page"
)

// Page answers GET /s/:cuid from the read cache (a.notePage): the page shell around the
// note's stored HTML, or the small 404 page.
func (a *api) Page(c *gin.Context) {
	id := c.Param("cuid")
	if !cuid.Valid(id) {
		notFoundPage(c)
		return
	}
	a.public.ServeView(c, id, a.notePage)
}

// notePageRead is the read of a note's page.
func (a *api) notePageRead() noteapi.ViewRead {
	return noteapi.ViewRead{Route: routes.NotePage, Compress: true, NotFound: notFoundPage,
		View: a.readPage, Tag: notePageTag, Build: a.buildPage}
}

// notePageTag is the validator of v's page: its note, the owner's settings, the render,
// what its links resolved to and the page's own version.
func notePageTag(v note.View) string {
	return noteapi.Tag(routes.NotePage.Path, v.ETag, noteapi.SettingsTag(v), strconv.Itoa(v.RenderVersion), v.RenderID, v.LinksTag, page.Version)
}

// buildPage is the cache entry of v's page.
func (a *api) buildPage(_ context.Context, v note.View, etag string) (*readcache.Entry, error) {
	pg, err := page.Render(a.pageData(v))
	if err != nil {
		return nil, err
	}
	a.renders.Inc()
	e := noteapi.Entry(v, etag, "text/html; charset=utf-8", pg.HTML)
	e.Header = securityHeaders(pg.CSP)
	return e, nil
}

// readPage is note.Reader.ReadPage, counting the pages built from other notes.
func (a *api) readPage(ctx context.Context, cuid string) (note.View, error) {
	v, err := a.reader.ReadPage(ctx, cuid)
	if v.Unchanged != nil {
		a.rebuilds.Inc()
	}
	return v, err
}

// pageData is what the page of v shows. Its description and the classes of its body come
// from its properties whether the table shows them or not (docs/api.md "The note page").
func (a *api) pageData(v note.View) page.Data {
	s := v.Owner
	d := page.Data{Title: deref(v.Title), Summary: v.Description(), Published: v.CreatedAt, Updated: v.UpdatedAt,
		Body: template.HTML(v.HTML), Theme: s.Theme, Accent: s.AccentColor, Font: s.Font, URL: routes.NotePage.URL(a.publicURL, v.CUID),
		ImageURL: routes.OGImage.URL(a.publicURL, v.CUID+".png"), Noindex: !s.Indexable,
		BodyClass: page.NoteClasses(v.Properties)}
	if s.ShowAuthor {
		d.Author = s.Name
	}
	if v.ShowProperties {
		d.Properties = v.Properties
	}
	return d
}

// notFoundPage answers the small 404 page.
func notFoundPage(c *gin.Context) {
	for _, h := range securityHeaders(page.NotFound.CSP) {
		c.Header(h[0], h[1])
	}
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusNotFound, "text/html; charset=utf-8", page.NotFound.HTML)
}

// securityHeaders are a page's security headers.
func securityHeaders(csp string) [][2]string {
	return [][2]string{{"Content-Security-Policy", csp}, {"Referrer-Policy", "strict-origin-when-cross-origin"}}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
