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
)

type listItem struct {
	CUID      string      `json:"cuid"`
	URL       string      `json:"url"`
	Title     *string     `json:"title"`
	Summary   *string     `json:"summary"`
	Status    note.Status `json:"status"`
	CreatedAt string      `json:"created_at"`
	UpdatedAt string      `json:"updated_at"`
	ExpiresAt *string     `json:"expires_at"`
	ETag      string      `json:"etag"`
}

type listResponse struct {
	Notes      []listItem `json:"notes"`
	NextCursor *string    `json:"next_cursor"`
}

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
	rows, next, err := a.notes.List(c.Request.Context(), authn.Principal(c).AccountCUID, query["cursor"], limit)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	resp := listResponse{Notes: make([]listItem, len(rows))}
	now := a.notes.Now()
	for i, p := range rows {
		resp.Notes[i] = listItem{CUID: p.CUID, URL: noteapi.PageURL(a.notes, p.CUID), Title: p.Title, Summary: p.Summary, Status: p.Status(now),
			CreatedAt: httpx.FormatTime(p.CreatedAt), UpdatedAt: httpx.FormatTime(p.UpdatedAt), ExpiresAt: httpx.FormatTimePtr(p.ExpiresAt),
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
	var req struct {
		CUID *string `json:"cuid"`
	}
	if err := httpx.DecodeJSON(c, &req); err != nil {
		errs.Abort(c, err)
		return
	}
	if req.CUID == nil {
		errs.Abort(c, noteapi.InvalidField("cuid is required."))
		return
	}
	if !cuid.Valid(*req.CUID) {
		errs.Abort(c, errs.NotFoundError())
		return
	}
	if err := a.notes.Unpublish(c.Request.Context(), authn.Principal(c).AccountCUID, *req.CUID); err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"cuid": *req.CUID, "status": note.Unpublished})
}
