// Package auth is the auth service: it exchanges license credentials for two-hour session
// tokens (POST /api/auth/publish) and gives operators the `licenses` command that issues
// and revokes those credentials.
package auth

import (
	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/auth/internal/authapi"
)

// New is the auth module.
func New(d app.Deps) (app.Service, error) {
	api := authapi.New(d.Accounts)
	return app.Service{Name: routes.Auth, Handlers: map[string]gin.HandlerFunc{
		routes.AuthPublish: api.Publish,
	}}, nil
}

// Program is the auth binary: it serves by default and offers `licenses`.
var Program = app.Program{
	Name:     "auth",
	Modules:  []app.Module{New},
	Commands: []app.Command{LicensesCommand},
	Default:  "serve",
}
