// Package publish is the publish service: POST /api/publish in its three body formats
// (raw Markdown, JSON, multipart with images).
package publish

import (
	"os"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
)

// Module is the publish target.
var Module = app.Module{Name: routes.Publish, New: newService}

// newService builds the publish target. Image parts are spooled to the temporary directory ($TMPDIR,
// else /tmp; the chart mounts an emptyDir there); when it cannot be written, they are
// kept in memory instead, bounded by SHARE_MAX_UPLOADS, and a warning says so.
func newService(d app.Deps) (app.Service, error) {
	dir := os.TempDir()
	if err := checkSpoolDir(dir); err != nil {
		d.Log.Warn("image uploads are kept in memory: the temporary directory cannot be written", "dir", dir, "err", err)
		dir = ""
	}
	a := newAPI(d.Notes, dir)
	return app.Service{Handlers: a.handlers()}, nil
}
