// Package images is the images service: the public bytes of uploaded images, and the
// reaper that deletes the bytes of images of unpublished notes.
package images

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/images/internal/imagesapi"
)

// Module is the images target.
var Module = app.Module{Name: routes.Images, New: newService}

// newService builds the images target.
func newService(d app.Deps) (app.Service, error) {
	api := imagesapi.New(d.Notes, d.Reads)
	s := app.Service{Handlers: api.Handlers()}
	if d.Config.ReapInterval > 0 {
		s.Jobs = append(s.Jobs, reapJob(d))
	}
	return s, nil
}
