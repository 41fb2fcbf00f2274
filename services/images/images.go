// Package images is the images target: the public bytes of uploaded images.
package images

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
)

// Module is the images target.
var Module = app.Module{Name: routes.Images, New: newService}

// newService builds the images target.
func newService(d app.Deps) (app.Service, error) {
	a := newAPI(d.Notes, d.Reads)
	return app.Service{Handlers: a.handlers()}, nil
}
