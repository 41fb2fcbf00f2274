// Package ogrenderer is the og-renderer service: the social preview PNG of a publication
// (GET /api/og/<cuid>.png), drawn from its title, summary and author in the owner's
// appearance, and cached in process.
package ogrenderer

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
)

// Target is the og-renderer target.
var Target = app.Target{Name: routes.OGRenderer, New: newParts,
	Needs: app.Needs{Database: app.ReadOnly, Redis: true, ChangeFeed: true}}

// newParts builds the parts of the og-renderer target. Its metrics go to d.Registry.
func newParts(d app.Deps) (app.Parts, error) {
	cards, err := d.Cards()
	if err != nil {
		return app.Parts{}, err
	}
	a, err := newAPI(cards, d.Public(), d.Registry)
	if err != nil {
		return app.Parts{}, err
	}
	return app.Parts{Handlers: a.handlers()}, nil
}
