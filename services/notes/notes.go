// Package notes is the notes service: reading, updating, versioning, listing and
// unpublishing publications, the public note page, and the account's sharing settings.
package notes

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/openapi"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/notes/internal/notesapi"
)

// New is the notes module.
func New(d app.Deps) (app.Service, error) {
	api := notesapi.New(d.Notes, d.Settings, d.Reads, d.Registry)
	return app.Service{Name: routes.Notes, Handlers: map[string]gin.HandlerFunc{
		routes.NoteRead:        api.ReadNote,
		routes.NoteUpdate:      api.UpdateNote,
		routes.NoteVersions:    api.ListVersions,
		routes.NoteVersion:     api.ReadVersion,
		routes.NoteUnshare:     api.Unshare,
		routes.UserNotes:       api.ListNotes,
		routes.NotePage:        api.Page,
		routes.OpenAPIDocument: func(c *gin.Context) { c.Data(http.StatusOK, "application/json", openapi.JSON()) },
		routes.SettingsRead:    api.GetSettings,
		routes.SettingsReplace: api.ReplaceSettings,
		routes.SettingsUpdate:  api.UpdateSettings,
	}}, nil
}

// Program is the notes binary; it serves by default.
var Program = app.Program{Name: "notes", Modules: []app.Module{New}, Default: "serve"}
