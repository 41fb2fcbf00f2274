// Package routes is the one list of sharenote's targets and of its public HTTP surface:
// every route on one line with its method, path, target, access class and body limit.
// Every process mounts its handlers from this table (a route of a target it does not serve
// answers 404), and the ingress rules of the Helm chart, of compose and of the e2e are
// generated from it and checked against it by tests, so they cannot drift apart.
package routes

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
)

// Access is who may call a route and which limits it counts toward.
type Access int

const (
	// Public routes need no credentials.
	Public Access = iota
	// License routes authenticate with license credentials in the body; they count toward
	// the per-IP authentication limit.
	License
	// Bearer routes need a session token.
	Bearer
	// Mutation routes need a session token and count toward the per-account mutation limit.
	Mutation
)

func (a Access) String() string {
	return [...]string{"public", "license", "bearer", "mutation"}[a]
}

// Targets, by their Kubernetes (kebab-case) names: what `sharenote serve --target` serves
// and what each Deployment runs.
const (
	Auth       = "auth"
	Publish    = "publish"
	Notes      = "notes"
	Images     = "images"
	OGRenderer = "og-renderer"
	// All is every target in one process, the all-in-one.
	All = "all"
)

// Targets lists every target in deployment order. The chart's Deployments, the compose
// services, the Tiltfile and the e2e topology are checked against it or read it.
var Targets = []string{Auth, Publish, Notes, Images, OGRenderer}

// Body limits from docs/api.md "Limits". Routes whose bodies are not publish or update
// bodies take a small JSON body.
const (
	JSONLimit      = 2_000_000
	MultipartLimit = 25_000_000
	SmallLimit     = 64 << 10
)

// Route is one row of the table. Path uses gin's syntax; the API's /api/og/:cuid.png is the
// single-segment parameter :file, whose handler requires the .png suffix. One row, SitePage,
// has its parameter inside its first segment (/@:handle) and a catch-all (*path) after it. Targets attach
// their handlers to the rows by these variables, so a handler names its route in Go, not
// by a string.
type Route struct {
	Method  string
	Path    string
	Target  string
	Access  Access
	MaxBody int64
}

// The routes of docs/api.md "Endpoints".
var (
	AuthPublish     = &Route{"POST", "/api/auth/publish", Auth, License, SmallLimit}
	PublishCreate   = &Route{"POST", "/api/publish", Publish, Mutation, MultipartLimit}
	NoteRead        = &Route{"GET", "/api/notes/:cuid", Notes, Public, 0}
	NoteUpdate      = &Route{"PATCH", "/api/notes/:cuid", Notes, Mutation, MultipartLimit}
	NoteVersions    = &Route{"GET", "/api/notes/:cuid/versions", Notes, Bearer, 0}
	NoteVersion     = &Route{"GET", "/api/notes/:cuid/versions/:version", Notes, Bearer, 0}
	NoteUnshare     = &Route{"POST", "/api/unshare", Notes, Mutation, SmallLimit}
	UserNotes       = &Route{"GET", "/api/user/notes", Notes, Bearer, 0}
	SettingsRead    = &Route{"GET", "/api/user/settings", Notes, Bearer, 0}
	SettingsReplace = &Route{"PUT", "/api/user/settings", Notes, Mutation, SmallLimit}
	SettingsUpdate  = &Route{"PATCH", "/api/user/settings", Notes, Mutation, SmallLimit}
	SiteRead        = &Route{"GET", "/api/user/site", Notes, Bearer, 0}
	SiteReplace     = &Route{"PUT", "/api/user/site", Notes, Mutation, SmallLimit}
	SiteUpdate      = &Route{"PATCH", "/api/user/site", Notes, Mutation, SmallLimit}
	ImageRead       = &Route{"GET", "/api/images/:userCuid/:noteCuid/:filename", Images, Public, 0}
	OGImage         = &Route{"GET", "/api/og/:file", OGRenderer, Public, 0}
	NotePage        = &Route{"GET", "/s/:cuid", Notes, Public, 0}
	OpenAPIDocument = &Route{"GET", "/api/openapi.json", Notes, Public, 0}
	// Asset serves the files pages load from the service's own origin (the diagram
	// scripts), each under a name that changes with its content.
	Asset = &Route{"GET", "/assets/:file", Notes, Public, 0}
	// SitePage serves every page of every site (CONTRACT "Sites"): /@<handle>/ and all
	// below it. Its handler reads the escaped request path itself (ParseSitePath), never
	// the decoded one, since "+" and "%2B" name different notes.
	SitePage = &Route{"GET", "/@:handle/*path", Notes, Public, 0}
	// SiteBare is a site's address without its trailing slash: 301 to its home.
	SiteBare = &Route{"GET", "/@:handle", Notes, Public, 0}
)

// Table is the public HTTP surface: every route, once.
var Table = []*Route{
	AuthPublish, PublishCreate, NoteRead, NoteUpdate, NoteVersions, NoteVersion, NoteUnshare,
	UserNotes, SettingsRead, SettingsReplace, SettingsUpdate, SiteRead, SiteReplace, SiteUpdate, ImageRead, OGImage, NotePage,
	OpenAPIDocument, Asset, SitePage, SiteBare,
}

// ParseTargets reads a comma list of target names (SHARE_TARGETS, `serve --target`):
// "all" is every target. The result is in deployment order, without repeats.
func ParseTargets(s string) ([]string, error) {
	var named []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == All:
			named = append(named, Targets...)
		case slices.Contains(Targets, name):
			named = append(named, name)
		default:
			return nil, fmt.Errorf("unknown target %q (targets: %s, or %s)", name, strings.Join(Targets, ", "), All)
		}
	}
	var out []string
	for _, t := range Targets {
		if slices.Contains(named, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// ForTarget returns the rows served by target.
func ForTarget(target string) []*Route {
	var out []*Route
	for _, r := range Table {
		if r.Target == target {
			out = append(out, r)
		}
	}
	return out
}

// Print writes the table as aligned text, one route a line (`sharenote routes`).
func Print(w io.Writer) error {
	for _, r := range Table {
		if _, err := fmt.Fprintf(w, "%-6s %-44s %-12s %-9s %d\n", r.Method, r.Path, r.Target, r.Access, r.MaxBody); err != nil {
			return err
		}
	}
	return nil
}

// Match reports whether the request path matches the gin pattern, segment by segment: a
// :param is the rest of its segment (not empty), a *catch-all everything from its place on.
func Match(pattern, path string) bool {
	if head, _, ok := strings.Cut(pattern, "/*"); ok {
		rest, found := strings.CutPrefix(path, "/")
		i := strings.Index(rest, "/")
		return found && i >= 0 && Match(head, "/"+rest[:i])
	}
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) || strings.HasSuffix(path, "/") != strings.HasSuffix(pattern, "/") {
		return false
	}
	for i, p := range ps {
		literal, param, ok := strings.Cut(p, ":")
		switch {
		case !ok && p != xs[i]:
			return false
		case ok && param != "" && (!strings.HasPrefix(xs[i], literal) || len(xs[i]) == len(literal)):
			return false
		}
	}
	return true
}

// URL returns the absolute URL of the route under base ({base_url}, without a trailing
// slash): its path with the :param segments filled, in order, by params, each escaped as
// a path segment. Every public URL the service hands out is built here, from the row it
// names, so that a link cannot drift from the route that answers it. A count of params
// other than the path's parameters is a programming error and panics, as is a route whose
// URLs are built otherwise (SitePage: SiteURL).
func (r *Route) URL(base string, params ...string) string {
	if strings.Contains(r.Path, "*") || strings.Contains(r.Path, "@:") {
		panic(fmt.Sprintf("routes: %s %s builds its URLs with SiteURL", r.Method, r.Path))
	}
	if n := strings.Count(r.Path, "/:"); n != len(params) {
		panic(fmt.Sprintf("routes: %s %s takes %d parameters, not %d", r.Method, r.Path, n, len(params)))
	}
	segments := strings.Split(r.Path, "/")
	for i, s := range segments {
		if strings.HasPrefix(s, ":") {
			segments[i], params = url.PathEscape(params[0]), params[1:]
		}
	}
	return base + strings.Join(segments, "/")
}
