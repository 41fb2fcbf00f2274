package auth

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/routes"
)

// api serves the auth routes.
type api struct {
	accounts *account.Core
}

// newAPI returns the API on the account core.
func newAPI(accounts *account.Core) *api { return &api{accounts: accounts} }

type publishRequest struct {
	LicenseKey string `json:"license_key"`
	InstanceID string `json:"instance_id"`
}

// tokenResponse is SPEC.md's session token response.
type tokenResponse struct {
	Token     string `json:"token"`
	ExpiresAt string `json:"expires_at"`
	UserCUID  string `json:"user_cuid"`
	User      struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	} `json:"user"`
}

// handlers attaches the handlers of the target to its routes; a route added to the
// target gets its line here.
func (a *api) handlers() app.Handlers {
	return app.Handlers{
		routes.AuthPublish: a.Publish,
	}
}

// Publish exchanges {license_key, instance_id} for a session token.
func (a *api) Publish(c *gin.Context) {
	var req publishRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		errs.Abort(c, err)
		return
	}
	tok, err := a.accounts.Authenticate(c.Request.Context(), req.LicenseKey, req.InstanceID)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	var resp tokenResponse
	resp.Token = tok.Token
	resp.ExpiresAt = httpx.FormatTime(tok.ExpiresAt)
	resp.UserCUID = tok.Account.CUID
	resp.User.Name = tok.Account.Name
	resp.User.Email = tok.Account.Email
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, resp)
}
