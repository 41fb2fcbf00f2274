// Package images is the images target: the public bytes of uploaded images.
package images

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
)

// Target is the images target.
var Target = app.Target{Name: routes.Images, New: newParts,
	Needs: app.Needs{Database: app.ReadOnly, Redis: true, ObjectStore: true, ChangeFeed: true}}

// newParts builds the parts of the images target.
func newParts(d app.Deps) (app.Parts, error) {
	images, err := d.Images()
	if err != nil {
		return app.Parts{}, err
	}
	a := newAPI(images, d.Public())
	return app.Parts{Handlers: a.handlers()}, nil
}
