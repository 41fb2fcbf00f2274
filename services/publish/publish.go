// Package publish is the publish service: POST /api/publish in its three body formats
// (raw Markdown, JSON, multipart with images).
package publish

import (
	"os"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/publish/internal/publishapi"
)

// New is the publish module. Image parts are spooled to the temporary directory ($TMPDIR,
// else /tmp; the chart mounts an emptyDir there); when it cannot be written, they are
// kept in memory instead, bounded by SHARE_MAX_UPLOADS, and a warning says so.
func New(d app.Deps) (app.Service, error) {
	dir := os.TempDir()
	if err := publishapi.CheckSpoolDir(dir); err != nil {
		d.Log.Warn("image uploads are kept in memory: the temporary directory cannot be written", "dir", dir, "err", err)
		dir = ""
	}
	api := publishapi.New(d.Notes, dir)
	return app.Service{Name: routes.Publish, Handlers: map[string]gin.HandlerFunc{
		routes.PublishCreate: api.Publish,
	}}, nil
}

// Program is the publish binary; it serves by default.
var Program = app.Program{Name: "publish", Modules: []app.Module{New}, Default: "serve"}
