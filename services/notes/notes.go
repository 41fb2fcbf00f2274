// Package notes is the notes service: reading, updating, versioning, listing and
// unpublishing publications, the public note page and the scripts it loads, and the
// account's sharing settings.
package notes

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/openapi"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/notes/internal/assets"
)

// Target is the notes target.
var Target = app.Target{Name: routes.Notes, New: newParts,
	Needs: app.Needs{Database: app.ReadWrite, Redis: true, ObjectStore: true, Renderer: true, ChangeFeed: true,
		Jobs: []string{app.JobReap, app.JobPurge}}}

// newParts builds the parts of the notes target.
func newParts(d app.Deps) (app.Parts, error) {
	a, err := newAPI(d)
	if err != nil {
		return app.Parts{}, err
	}
	return app.Parts{Handlers: a.handlers()}, nil
}

// handlers attaches the handlers of the notes target to its routes; a route added to
// the target gets its line here.
func (a *api) handlers() app.Handlers {
	return app.Handlers{
		routes.NoteRead:        a.ReadNote,
		routes.NoteUpdate:      a.UpdateNote,
		routes.NoteVersions:    a.ListVersions,
		routes.NoteVersion:     a.ReadVersion,
		routes.NoteUnshare:     a.Unshare,
		routes.UserNotes:       a.ListNotes,
		routes.NotePage:        a.Page,
		routes.OpenAPIDocument: func(c *gin.Context) { c.Data(http.StatusOK, "application/json", openapi.JSON()) },
		routes.Asset:           assets.Serve,
		routes.SettingsRead:    a.GetSettings,
		routes.SettingsReplace: a.ReplaceSettings,
		routes.SettingsUpdate:  a.UpdateSettings,
		routes.SiteRead:        a.GetSite,
		routes.SiteReplace:     a.ReplaceSite,
		routes.SiteUpdate:      a.UpdateSite,
		routes.SitePage:        a.SitePage,
		routes.SiteBare:        a.SiteBare,
	}
}
