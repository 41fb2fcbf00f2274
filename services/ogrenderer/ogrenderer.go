// Package ogrenderer is the og-renderer service: the social preview PNG of a publication
// (GET /api/og/<cuid>.png), drawn from its title, summary and author in the owner's
// appearance, and cached in process.
package ogrenderer

import (
	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/ogrenderer/internal/ogapi"
)

// New is the og-renderer module. Its metrics go to d.Registry.
func New(d app.Deps) (app.Service, error) {
	api, err := ogapi.New(d.Notes, d.Reads, d.Registry)
	if err != nil {
		return app.Service{}, err
	}
	return app.Service{Name: routes.OGRenderer, Handlers: map[string]gin.HandlerFunc{
		routes.OGImage: api.Image,
	}}, nil
}

// Program is the og-renderer binary; it serves by default.
var Program = app.Program{Name: "og-renderer", Modules: []app.Module{New}, Default: "serve"}
