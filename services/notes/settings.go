package notes

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/site"
	"github.com/sharenote/sharenote/libs/wire"
)

// api serves the notes routes.
type api struct {
	notes     *note.Publisher
	reader    *note.Reader
	history   *note.History
	publicURL string
	settings  *account.SettingsCore
	sites     *site.Core
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
	a := &api{settings: d.Settings, sites: d.Sites, public: d.Public(), publicURL: d.Config.PublicURL, log: d.Log,
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
	var in wire.SettingsInput
	if err := httpx.DecodeJSONStrict(c, &in); err != nil {
		errs.Abort(c, err)
		return
	}
	if !replace && in == (wire.SettingsInput{}) {
		errs.Abort(c, errs.New(http.StatusBadRequest, errs.InvalidBody, "The body must be a JSON object with at least one settings field."))
		return
	}
	p, err := a.settings.Change(c.Request.Context(), authn.Principal(c).AccountCUID, account.SettingsChange{Replace: replace,
		Name: in.Name, ShowAuthor: in.ShowAuthor, Theme: in.Theme, AccentColor: in.AccentColor, Font: in.Font, Indexable: in.Indexable})
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
