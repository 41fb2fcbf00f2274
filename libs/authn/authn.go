// Package authn is the bearer-token middleware every authenticated route uses.
package authn

import (
	"context"
	"errors"
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
			errs.Abort(c, Error(err))
			return
		}
		c.Set(principalKey, p)
		c.Next()
	}
}

// Error translates a credential check's error for the HTTP edge: every
// account.ErrUnauthorized is the one 401 body; other errors pass unchanged.
func Error(err error) error {
	if errors.Is(err, account.ErrUnauthorized) {
		return errs.UnauthorizedError()
	}
	return err
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
