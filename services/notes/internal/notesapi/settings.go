// Package notesapi holds the notes service's HTTP handlers.
package notesapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/readcache"
)

// API serves the notes routes.
type API struct {
	notes    *note.Core
	settings *account.SettingsCore
	public   *noteapi.Public
	renders  prometheus.Counter
}

// New returns the API; public reads are answered from reads, and its page counter
// registers on reg.
func New(notes *note.Core, settings *account.SettingsCore, reads *readcache.Cache, reg prometheus.Registerer) *API {
	a := &API{notes: notes, settings: settings, public: noteapi.NewPublic(reads, notes.Clock),
		renders: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sharenote_page_renders_total", Help: "Note pages built around their stored HTML; cached reads are not counted."})}
	reg.MustRegister(a.renders)
	return a
}

// GetSettings answers GET /api/user/settings.
func (a *API) GetSettings(c *gin.Context) {
	p, err := a.settings.Get(c.Request.Context(), authn.Principal(c).AccountCUID)
	a.answerSettings(c, p, err)
}

// ReplaceSettings answers PUT /api/user/settings: fields not given reset to defaults.
func (a *API) ReplaceSettings(c *gin.Context) { a.changeSettings(c, true) }

// UpdateSettings answers PATCH /api/user/settings: only the given fields change.
func (a *API) UpdateSettings(c *gin.Context) { a.changeSettings(c, false) }

func (a *API) changeSettings(c *gin.Context, replace bool) {
	var fields map[string]json.RawMessage
	if err := httpx.DecodeJSON(c, &fields); err != nil {
		errs.Abort(c, err)
		return
	}
	if fields == nil || (!replace && len(fields) == 0) {
		errs.Abort(c, errs.New(http.StatusBadRequest, errs.InvalidBody, "The body must be a JSON object with at least one settings field."))
		return
	}
	p, err := a.settings.Change(c.Request.Context(), authn.Principal(c).AccountCUID, fields, replace)
	a.answerSettings(c, p, err)
}

func (a *API) answerSettings(c *gin.Context, p account.Profile, err error) {
	var fe *account.FieldError
	switch {
	case errors.As(err, &fe):
		errs.Abort(c, errs.New(http.StatusBadRequest, errs.InvalidField, "Settings field "+fe.Error()+"."))
	case errors.Is(err, account.ErrNotFound):
		errs.Abort(c, errs.NotFoundError())
	case err != nil:
		errs.Abort(c, err)
	default:
		c.Header("Cache-Control", "no-store")
		c.JSON(http.StatusOK, p)
	}
}
