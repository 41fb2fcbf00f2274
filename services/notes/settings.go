package notes

import (
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/wire"
)

// api serves the notes routes.
type api struct {
	notes     *note.Publisher
	reader    *note.Reader
	history   *note.History
	publicURL string
	settings  *account.SettingsCore
	public    *noteapi.Public
	// noteJSON and notePage are the public reads of a note's JSON and page.
	noteJSON, notePage noteapi.ViewRead
	renders            prometheus.Counter
	// rebuilds counts the page loads that resolved a page's links and embeds again.
	rebuilds prometheus.Counter
	log      *slog.Logger
}

// newAPI returns the API on d's use cases; public reads are answered by d.Public(), and
// its page counters register on d.Registry.
func newAPI(d app.Deps) (*api, error) {
	a := &api{settings: d.Settings, public: d.Public(), publicURL: d.Config.PublicURL, log: d.Log,
		renders: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sharenote_page_renders_total", Help: "Note pages built around their stored HTML; cached reads are not counted."}),
		rebuilds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sharenote_page_rebuilds_total",
			Help: "Loads of pages that link to or embed notes which resolved their links and read their embeds again: a new page, or a change of what it shows. A re-check that finds nothing changed (one statement) is not counted."})}
	var err error
	if a.notes, err = d.Publisher(); err != nil {
		return nil, err
	}
	if a.reader, err = d.Reader(); err != nil {
		return nil, err
	}
	if a.history, err = d.History(); err != nil {
		return nil, err
	}
	a.noteJSON, a.notePage = a.noteJSONRead(), a.notePageRead()
	d.Registry.MustRegister(a.renders, a.rebuilds)
	return a, nil
}

// GetSettings answers GET /api/user/settings.
func (a *api) GetSettings(c *gin.Context) {
	p, err := a.settings.Get(c.Request.Context(), authn.Principal(c).AccountCUID)
	answerSettings(c, p, err)
}

// ReplaceSettings answers PUT /api/user/settings: fields not given reset to defaults.
func (a *api) ReplaceSettings(c *gin.Context) { a.changeSettings(c, true) }

// UpdateSettings answers PATCH /api/user/settings: only the given fields change.
func (a *api) UpdateSettings(c *gin.Context) { a.changeSettings(c, false) }

func (a *api) changeSettings(c *gin.Context, replace bool) {
	var fields map[string]json.RawMessage
	if err := httpx.DecodeJSON(c, &fields); err != nil {
		errs.Abort(c, err)
		return
	}
	if fields == nil || (!replace && len(fields) == 0) {
		errs.Abort(c, errs.New(http.StatusBadRequest, errs.InvalidBody, "The body must be a JSON object with at least one settings field."))
		return
	}
	change, err := decodeSettingsChange(fields, replace)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	p, err := a.settings.Change(c.Request.Context(), authn.Principal(c).AccountCUID, change)
	answerSettings(c, p, err)
}

// answerSettings answers a settings route with the profile, or with the error.
func answerSettings(c *gin.Context, p account.Profile, err error) {
	if err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, wire.Profile{Settings: wire.Settings(p.Settings), Storage: wire.Storage(p.Storage)})
}

// decodeSettingsChange turns the JSON object of a PUT (replace) or PATCH of the settings
// into the domain's change. The fields are read in key order, so that the first bad one is
// the one reported whatever order the client sent; a field that is not a settings field,
// a null and a value of the wrong JSON type are each an *account.FieldError (400
// invalid_field, as a bad value the domain refuses is).
func decodeSettingsChange(fields map[string]json.RawMessage, replace bool) (account.SettingsChange, error) {
	ch := account.SettingsChange{Replace: replace}
	dst := map[string]any{"name": &ch.Name, "show_author": &ch.ShowAuthor, "theme": &ch.Theme,
		"accent_color": &ch.AccentColor, "font": &ch.Font, "indexable": &ch.Indexable}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		var err error
		switch p := dst[name].(type) {
		case **string:
			*p, err = settingsField[string](name, fields[name])
		case **bool:
			*p, err = settingsField[bool](name, fields[name])
		default:
			err = &account.FieldError{Field: name, Reason: "is not a settings field"}
		}
		if err != nil {
			return account.SettingsChange{}, err
		}
	}
	return ch, nil
}

// settingsField decodes the value of the settings field name: a string or a boolean, never
// null (a PUT that leaves the field out resets it; null does not).
func settingsField[T string | bool](name string, raw json.RawMessage) (*T, error) {
	var v T
	if string(raw) == "null" || json.Unmarshal(raw, &v) != nil {
		kind := "a string"
		if _, ok := any(v).(bool); ok {
			kind = "a boolean"
		}
		return nil, &account.FieldError{Field: name, Reason: "must be " + kind}
	}
	return &v, nil
}
