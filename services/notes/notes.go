// Package notes is the notes service: reading, updating, versioning, listing and
// unpublishing publications, the public note page, and the account's sharing settings.
package notes

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
)

// Module is the notes target.
var Module = app.Module{Name: routes.Notes, New: newService}

// newService builds the notes target.
func newService(d app.Deps) (app.Service, error) {
	a := newAPI(d.Notes, d.Settings, d.Reads, d.Registry, d.Log)
	return app.Service{Handlers: a.handlers()}, nil
}
