package notesapi

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

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
	d := page.Data{Summary: deref(p.Summary), Published: p.CreatedAt, Updated: p.UpdatedAt, Markdown: p.Content,
		Theme: s.Theme, Accent: s.AccentColor, Font: s.Font, URL: a.notes.URL(p.CUID),
		ImageURL: a.notes.PublicURL() + "/api/og/" + p.CUID + ".png", Noindex: !s.Indexable}
	d.Title = deref(p.Title)
	if s.ShowAuthor {
		d.Author = s.Name
	}
	if p.ShowProperties {
		d.Properties = p.Properties
	}
	pg, err := page.Render(d)
	if err != nil {
		errs.Abort(c, errs.Internal(err))
		return
	}
	writeHeaders(c, pg.CSP)
	noteapi.ServePublic(c, p, a.notes.Now(), s.Indexable, "text/html; charset=utf-8", "", pg.HTML)
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
