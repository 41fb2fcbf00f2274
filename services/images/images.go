// Package images is the images service: the public bytes of uploaded images.
package images

import (
	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/images/internal/imagesapi"
)

// New is the images module.
func New(d app.Deps) (app.Service, error) {
	api := imagesapi.New(d.Notes, d.Settings)
	return app.Service{Name: routes.Images, Handlers: map[string]gin.HandlerFunc{
		routes.ImageRead: api.Read,
	}}, nil
}

// Program is the images binary; it serves by default.
var Program = app.Program{Name: "images", Modules: []app.Module{New}, Default: "serve"}
