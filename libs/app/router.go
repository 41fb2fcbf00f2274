package app

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/ratelimit"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/telemetry"
)

// releaseMode puts gin in release mode (no debug output) once, before the first router.
var releaseMode sync.Once

// limiters are the process's rate limiters: perIP for the limit every request counts
// toward, exact for the authentication and mutation limits.
type limiters struct {
	perIP, exact ratelimit.Limiter
}

// newRouter mounts the routes of the targets in parts (keyed by target name), each with
// the middleware its row names; a route of a target without a handler, a handler for a
// route of another target, or a route that needs a session without sessions (nil when no
// target needs the change feed), is an error. The middleware order, outermost first: request id,
// tracing, access log, metrics, error rendering, panic recovery, the per-IP limit on
// everything; then per route: body limit (size and minimum transfer rate), the per-IP auth
// limit, bearer auth, the per-account mutation limit, the upload cap, the handler.
func newRouter(d Deps, lim limiters, sessions authn.Verifier, uploads *httpx.Uploads, parts map[string]Parts) (*gin.Engine, error) {
	releaseMode.Do(func() { gin.SetMode(gin.ReleaseMode) })
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.ContextWithFallback = true
	// The client's address is ips's to tell; gin's own ClientIP, unused, gives the peer.
	e.ForwardedByClientIP = false
	ips := httpx.NewClientIPs(d.Config.TrustedProxies)
	e.Use(
		httpx.RequestID(),
		telemetry.Tracing(d.Tracer, ips.Of),
		httpx.AccessLog(d.Log, ips),
		telemetry.NewHTTPMetrics(d.Registry).Middleware(),
		errs.Middleware(d.Log, noteapi.Translate),
		httpx.Recovery(),
		ratelimit.Middleware(lim.perIP, ratelimit.AllAPI, limitKey(ips)),
	)

	var auth gin.HandlerFunc
	if sessions != nil {
		auth = authn.Middleware(sessions)
	}
	var mounted []routes.Route
	for _, target := range slices.Sorted(maps.Keys(parts)) {
		s := parts[target]
		for r := range s.Handlers {
			if r.Target != target {
				return nil, fmt.Errorf("target %s has a handler for %s %s, a route of %s", target, r.Method, r.Path, r.Target)
			}
		}
		for _, r := range routes.ForTarget(target) {
			h, ok := s.Handlers[r]
			if !ok || h == nil {
				return nil, fmt.Errorf("target %s has no handler for its route %s %s", target, r.Method, r.Path)
			}
			if auth == nil && (r.Access == routes.Bearer || r.Access == routes.Mutation) {
				return nil, fmt.Errorf("target %s verifies sessions (%s %s) but does not need the change feed that keeps them current", target, r.Method, r.Path)
			}
			handlers := append(chain(r, lim, ips, auth, uploads), h)
			e.Handle(r.Method, r.Path, handlers...)
			mounted = append(mounted, *r)
			if r.Method == http.MethodGet {
				// HEAD is GET without the body (net/http drops it), as HTTP requires.
				e.Handle(http.MethodHead, r.Path, handlers...)
				head := *r
				head.Method = http.MethodHead
				mounted = append(mounted, head)
			}
		}
	}
	e.NoRoute(func(c *gin.Context) { errs.Abort(c, errs.NotFoundError()) })
	e.NoMethod(func(c *gin.Context) {
		allow := allowed(mounted, c.Request.URL.Path)
		c.Header("Allow", strings.Join(allow, ", "))
		errs.Abort(c, errs.Newf(http.StatusMethodNotAllowed, errs.MethodNotAllowed,
			"%s is not allowed here; allowed: %s.", c.Request.Method, strings.Join(allow, ", ")))
	})
	return e, nil
}

// chain returns the per-route middleware of r's table row. Routes whose bodies may be
// larger than a small JSON body take a slot of the process's upload cap after the
// caller's identity and limits are checked, so that neither an anonymous client nor an
// account over its mutation limit can occupy one.
func chain(r *routes.Route, lim limiters, ips httpx.ClientIPs, auth gin.HandlerFunc, uploads *httpx.Uploads) []gin.HandlerFunc {
	var hs []gin.HandlerFunc
	if r.MaxBody > 0 {
		hs = append(hs, httpx.BodyLimit(r.MaxBody))
	}
	switch r.Access {
	case routes.License:
		hs = append(hs, ratelimit.Middleware(lim.exact, ratelimit.Auth, limitKey(ips)))
	case routes.Bearer:
		hs = append(hs, auth)
	case routes.Mutation:
		// The account's budget is sent on every answer after authentication (docs/api.md
		// "Rate limits").
		hs = append(hs, auth, ratelimit.Middleware(lim.exact, ratelimit.Mutation, authn.AccountKey, ratelimit.WithBudgetHeaders()))
	case routes.Public:
	}
	if r.MaxBody > routes.SmallLimit {
		hs = append(hs, uploads.Middleware())
	}
	return hs
}

// limitKey keys the per-IP limits: the client's IPv4 address, or the /64 network of its
// IPv6 address, since one subscriber commonly holds a whole /64 and could otherwise
// rotate through its addresses to escape every limit.
func limitKey(ips httpx.ClientIPs) func(*gin.Context) string {
	return func(c *gin.Context) string {
		ip := ips.Of(c.Request)
		addr, err := netip.ParseAddr(ip)
		if err != nil || !addr.Is6() || addr.Is4In6() {
			return ip
		}
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
}

// allowed lists the methods mounted for the paths that match path, for the Allow header.
func allowed(mounted []routes.Route, path string) []string {
	var out []string
	for _, r := range mounted {
		if routes.Match(r.Path, path) && !slices.Contains(out, r.Method) {
			out = append(out, r.Method)
		}
	}
	slices.Sort(out)
	return out
}
