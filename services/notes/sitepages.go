package notes

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/routes"
)

// SiteBare answers GET /@:handle: 301 to the site's home, /@<handle>/ (lowercase).
func (a *api) SiteBare(c *gin.Context) {
	redirect(c, "/@"+strings.ToLower(c.Param("handle"))+"/")
}

// SitePage answers GET /@:handle/*path, every page of a site (CONTRACT "Sites"), read
// from the escaped request path (routes.ParseSitePath). A handle in another case answers
// 301 to its lowercase spelling.
func (a *api) SitePage(c *gin.Context) {
	escaped := c.Request.URL.EscapedPath()
	sp, err := routes.ParseSitePath(escaped)
	if err != nil {
		notFoundPage(c)
		return
	}
	if lower := strings.ToLower(sp.Handle); lower != sp.Handle {
		redirect(c, "/@"+lower+strings.TrimPrefix(escaped, "/@"+sp.Handle))
		return
	}
	notFoundPage(c)
}

// redirect answers 301 to the service's own path to (escaped), keeping the query. An edge
// may keep it as long as a page (routes.SitePage's Cache-Control).
func redirect(c *gin.Context, to string) {
	if q := c.Request.URL.RawQuery; q != "" {
		to += "?" + q
	}
	c.Header("Cache-Control", "public, max-age=60")
	c.Redirect(http.StatusMovedPermanently, to)
}
