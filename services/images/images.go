// Package images is the images service: the public bytes of uploaded images, and the
// reaper that deletes the bytes of images of unpublished notes.
package images

import (
	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/images/internal/imagesapi"
)

// New is the images module.
func New(d app.Deps) (app.Service, error) {
	api := imagesapi.New(d.Notes, d.Reads)
	s := app.Service{Name: routes.Images, Handlers: map[string]gin.HandlerFunc{
		routes.ImageRead: api.Read,
	}}
	if d.Config.ReapInterval > 0 {
		s.Jobs = append(s.Jobs, reapJob(d))
	}
	return s, nil
}

// Program is the images binary; it serves by default and offers `reap`.
var Program = app.Program{Name: "images", Modules: []app.Module{New}, Commands: []app.Command{ReapCommand}, Default: "serve"}
