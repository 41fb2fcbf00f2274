// Package publish is the publish service: POST /api/publish in its three body formats
// (raw Markdown, JSON, multipart with images).
package publish

import (
	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/publish/internal/publishapi"
)

// New is the publish module.
func New(d app.Deps) (app.Service, error) {
	api := publishapi.New(d.Notes)
	return app.Service{Name: routes.Publish, Handlers: map[string]gin.HandlerFunc{
		routes.PublishCreate: api.Publish,
	}}, nil
}

// Program is the publish binary; it serves by default.
var Program = app.Program{Name: "publish", Modules: []app.Module{New}, Default: "serve"}
