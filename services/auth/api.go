package auth

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/wire"
)

// api serves the auth routes.
type api struct {
	accounts *account.Core
}

// newAPI returns the API on the account core.
func newAPI(accounts *account.Core) *api { return &api{accounts: accounts} }

// handlers attaches the handlers of the target to its routes; a route added to the
// target gets its line here.
func (a *api) handlers() app.Handlers {
	return app.Handlers{
		routes.AuthPublish: a.Publish,
	}
}

// Publish exchanges {license_key, instance_id} for a session token.
func (a *api) Publish(c *gin.Context) {
	var req wire.TokenRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		errs.Abort(c, err)
		return
	}
	tok, err := a.accounts.Authenticate(c.Request.Context(), req.LicenseKey, req.InstanceID)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, wire.Token{Token: tok.Token, ExpiresAt: wire.At(tok.ExpiresAt), UserCuid: tok.Account.CUID,
		User: wire.User{Name: tok.Account.Name, Email: tok.Account.Email}})
}
