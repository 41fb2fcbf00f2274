// Package publish is the publish service: POST /api/publish in its three body formats
// (raw Markdown, JSON, multipart with images).
package publish

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
)

// Module is the publish target.
var Module = app.Module{Name: routes.Publish, New: newService}

// newService builds the publish target.
func newService(d app.Deps) (app.Service, error) {
	a := &api{notes: d.Notes, log: d.Log}
	return app.Service{Handlers: a.handlers()}, nil
}
