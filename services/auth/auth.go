// Package auth is the auth service: it exchanges license credentials for two-hour session
// tokens (POST /api/auth/publish) and gives operators the `licenses` command that issues
// and revokes those credentials.
package auth

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
)

// Module is the auth target.
var Module = app.Module{Name: routes.Auth, New: newService}

// newService builds the auth target.
func newService(d app.Deps) (app.Service, error) {
	a := newAPI(d.Accounts)
	return app.Service{Handlers: a.handlers()}, nil
}
