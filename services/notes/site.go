package notes

import (
	"cmp"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/site"
	"github.com/sharenote/sharenote/libs/wire"
)

// GetSite answers GET /api/user/site.
func (a *api) GetSite(c *gin.Context) {
	v, err := a.sites.Get(c.Request.Context(), authn.Principal(c).AccountCUID)
	answerSite(c, v, err)
}

// ReplaceSite answers PUT /api/user/site: fields not given reset to their defaults.
func (a *api) ReplaceSite(c *gin.Context) { a.changeSite(c, true) }

// UpdateSite answers PATCH /api/user/site: only the given fields change.
func (a *api) UpdateSite(c *gin.Context) { a.changeSite(c, false) }

func (a *api) changeSite(c *gin.Context, replace bool) {
	query, err := noteapi.Query(c.Request.URL.RawQuery, "dry_run")
	if err != nil {
		errs.Abort(c, err)
		return
	}
	dryRun, err := strconv.ParseBool(cmp.Or(query["dry_run"], "false"))
	if err != nil {
		errs.Abort(c, errs.New(http.StatusBadRequest, errs.InvalidField, "The query parameter dry_run is true or false."))
		return
	}
	var in wire.SiteInput
	if err := httpx.DecodeJSONStrict(c, &in); err != nil {
		errs.Abort(c, err)
		return
	}
	ch := site.Change{Replace: replace, Enabled: noteapi.Optional(in.Enabled), Handle: noteapi.Optional(in.Handle),
		Roots: noteapi.Optional(in.Roots), Home: noteapi.Optional(in.Home), Title: noteapi.Optional(in.Title)}
	if !replace && ch.Empty() {
		errs.Abort(c, errs.New(http.StatusBadRequest, errs.InvalidBody, "The body must be a JSON object with at least one site field."))
		return
	}
	change := a.sites.Change
	if dryRun {
		change = a.sites.Preview
	}
	v, err := change(c.Request.Context(), authn.Principal(c).AccountCUID, ch)
	answerSite(c, v, err)
}

// answerSite answers a site route with the site, or with the error.
func answerSite(c *gin.Context, v site.View, err error) {
	if err != nil {
		errs.Abort(c, err)
		return
	}
	roots := v.Roots
	if roots == nil {
		roots = []string{}
	}
	c.Header("Cache-Control", "no-store")
	var listed []wire.ListedNote
	if v.Listed != nil {
		listed = make([]wire.ListedNote, len(v.Listed))
		for i, m := range v.Listed {
			listed[i] = wire.ListedNote{Cuid: m.CUID, Path: *m.Path, Title: m.Title}
		}
	}
	c.JSON(http.StatusOK, wire.Site{Enabled: v.Enabled, Handle: v.Handle, Roots: roots, Home: v.Home, Title: v.Title,
		SiteURL: v.URL, NewlyListed: v.NewlyListed, NewlyListedNotes: listed})
}
