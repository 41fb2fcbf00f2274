package notes

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/wire"
)

// ListNotes answers GET /api/user/notes.
func (a *api) ListNotes(c *gin.Context) {
	query, err := noteapi.Query(c.Request.URL.RawQuery, "cursor", "limit")
	if err != nil {
		errs.Abort(c, err)
		return
	}
	limit := note.ListDefault
	if raw, ok := query["limit"]; ok {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > note.ListMax {
			errs.Abort(c, errs.Newf(http.StatusBadRequest, errs.InvalidLimit, "limit must be an integer from 1 to %d.", note.ListMax))
			return
		}
		limit = n
	}
	rows, next, err := a.history.List(c.Request.Context(), authn.Principal(c).AccountCUID, query["cursor"], limit)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	resp := wire.NoteList{Notes: make([]wire.NoteListItem, len(rows))}
	now := a.notes.Now()
	for i, p := range rows {
		resp.Notes[i] = wire.NoteListItem{Ref: noteapi.Ref(a.publicURL, p.CUID), Title: p.DisplayTitle(), Summary: p.Summary, Path: p.Path,
			Status: string(p.Status(now)), CreatedAt: wire.At(p.CreatedAt), UpdatedAt: wire.At(p.UpdatedAt), ExpiresAt: wire.AtPtr(p.ExpiresAt),
			ETag: p.ETag}
	}
	if next != "" {
		resp.NextCursor = &next
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, resp)
}

// Unshare answers POST /api/unshare.
func (a *api) Unshare(c *gin.Context) {
	var req wire.UnshareRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		errs.Abort(c, err)
		return
	}
	if req.Cuid == "" {
		errs.Abort(c, noteapi.InvalidField("cuid is required."))
		return
	}
	if !cuid.Valid(req.Cuid) {
		errs.Abort(c, errs.NotFoundError())
		return
	}
	if err := a.notes.Unpublish(c.Request.Context(), authn.Principal(c).AccountCUID, req.Cuid); err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, wire.Unshared{Cuid: req.Cuid, Status: string(note.Unpublished)})
}
