package notes

import (
	"net/http"
	"regexp"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
)

type versionItem struct {
	Version      int64   `json:"version"`
	CreatedAt    string  `json:"created_at"`
	Title        *string `json:"title"`
	ContentBytes int     `json:"content_bytes"`
}

type versionBody struct {
	Version   int64  `json:"version"`
	CreatedAt string `json:"created_at"`
	noteText
}

var versionExpr = regexp.MustCompile(`^[1-9][0-9]*$`)

// ListVersions answers GET /api/notes/:cuid/versions.
func (a *api) ListVersions(c *gin.Context) {
	id := c.Param("cuid")
	if !cuid.Valid(id) {
		errs.Abort(c, errs.NotFoundError())
		return
	}
	vs, err := a.notes.Versions(c.Request.Context(), authn.Principal(c).AccountCUID, id)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	items := make([]versionItem, len(vs))
	for i, v := range vs {
		items[i] = versionItem{Version: v.Number, CreatedAt: httpx.FormatTime(v.CreatedAt), Title: v.Title, ContentBytes: v.ContentBytes}
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"versions": items})
}

// ReadVersion answers GET /api/notes/:cuid/versions/:version.
func (a *api) ReadVersion(c *gin.Context) {
	raw := c.Param("version")
	if !versionExpr.MatchString(raw) {
		errs.Abort(c, errs.New(http.StatusBadRequest, errs.InvalidVersion, "The version must be a positive integer."))
		return
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	id := c.Param("cuid")
	if err != nil || !cuid.Valid(id) {
		errs.Abort(c, errs.NotFoundError()) // A positive integer too large to exist.
		return
	}
	v, err := a.notes.Version(c.Request.Context(), authn.Principal(c).AccountCUID, id, n)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, versionBody{Version: v.Number, CreatedAt: httpx.FormatTime(v.CreatedAt),
		noteText: noteText{Title: v.Title, Summary: v.Summary, Content: v.Content, Properties: v.Properties,
			ShowProperties: v.ShowProperties, ExpiresAt: httpx.FormatTimePtr(v.ExpiresAt)}})
}
