// Package auth is the auth service: it exchanges license credentials for two-hour session
// tokens (POST /api/auth/publish) and gives operators the `licenses` command that issues
// and revokes those credentials.
package auth

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
)

// Target is the auth target.
var Target = app.Target{Name: routes.Auth, New: newParts,
	Needs: app.Needs{Database: app.ReadWrite, Redis: true}}

// newParts builds the parts of the auth target.
func newParts(d app.Deps) (app.Parts, error) {
	a := newAPI(d.Accounts)
	return app.Parts{Handlers: a.handlers()}, nil
}
