// Package authn is the bearer-token middleware every authenticated route uses.
package authn

import (
	"context"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/errs"
)

// Verifier resolves a bearer token; account.Core implements it.
type Verifier interface {
	Verify(ctx context.Context, token string) (account.Principal, error)
}

const principalKey = "sharenote.principal"

// Middleware requires `Authorization: Bearer <token>` with a valid token and stores the
// caller for Principal. Missing, malformed, unknown, expired and deactivated tokens all get
// the same 401 unauthorized.
func Middleware(v Verifier) gin.HandlerFunc {
	return func(c *gin.Context) {
		scheme, token, ok := strings.Cut(c.GetHeader("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			errs.Abort(c, errs.UnauthorizedError())
			return
		}
		p, err := v.Verify(c.Request.Context(), strings.TrimSpace(token))
		if err != nil {
			errs.Abort(c, err) // account.ErrUnauthorized: the same 401 as a missing token.
			return
		}
		c.Set(principalKey, p)
		c.Next()
	}
}

// Principal returns the caller authenticated by Middleware. It panics on a route without
// the middleware: that is a wiring bug, and the recovery middleware turns it into a 500.
func Principal(c *gin.Context) account.Principal {
	return c.MustGet(principalKey).(account.Principal)
}

// AccountKey returns the authenticated account's id, or "" on an unauthenticated request;
// it keys the per-account rate limit.
func AccountKey(c *gin.Context) string {
	if p, ok := c.Get(principalKey); ok {
		return p.(account.Principal).AccountCUID
	}
	return ""
}
