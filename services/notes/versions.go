package notes

import (
	"net/http"
	"regexp"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/wire"
)

var versionExpr = regexp.MustCompile(`^[1-9][0-9]*$`)

// ListVersions answers GET /api/notes/:cuid/versions.
func (a *api) ListVersions(c *gin.Context) {
	id := c.Param("cuid")
	if !cuid.Valid(id) {
		errs.Abort(c, errs.NotFoundError())
		return
	}
	vs, err := a.history.Versions(c.Request.Context(), authn.Principal(c).AccountCUID, id)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	list := wire.VersionList{Versions: make([]wire.VersionMeta, len(vs))}
	for i, v := range vs {
		list.Versions[i] = wire.VersionMeta{Version: int(v.Number), CreatedAt: wire.At(v.CreatedAt), Title: v.Title, ContentBytes: v.ContentBytes}
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, list)
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
	v, err := a.history.Version(c.Request.Context(), authn.Principal(c).AccountCUID, id, n)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, wire.Version{Version: int(v.Number), CreatedAt: wire.At(v.CreatedAt), NoteText: noteText(v.Text)})
}
