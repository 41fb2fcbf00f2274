// Package ogrenderer is the og-renderer service: the social preview PNG of a publication
// (GET /api/og/<cuid>.png), drawn from its title, summary and author in the owner's
// appearance, and cached in process.
package ogrenderer

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
)

// Module is the og-renderer target.
var Module = app.Module{Name: routes.OGRenderer, New: newService}

// newService builds the og-renderer target. Its metrics go to d.Registry.
func newService(d app.Deps) (app.Service, error) {
	a, err := newAPI(d.Notes, d.Reads, d.Registry)
	if err != nil {
		return app.Service{}, err
	}
	return app.Service{Handlers: a.handlers()}, nil
}
