// Package routes is the one table of the public HTTP surface: every route on one line with
// its method, path, owning service, access class and body limit. The same table mounts
// handlers in each service and in the all-in-one process, and generates the ingress
// routing of the Helm chart and of the compose stack, so they cannot drift apart.
package routes

import (
	"fmt"
	"io"
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

// Services, by their Kubernetes (kebab-case) names.
const (
	Auth        = "auth"
	Publish     = "publish"
	Notes       = "notes"
	Images      = "images"
	OGRenderer  = "og-renderer"
	allServices = "auth publish notes images og-renderer"
)

// Services lists every service name in deployment order.
var Services = strings.Fields(allServices)

// Body limits from SPEC.md "Limits". Routes whose bodies the spec does not size take a
// small JSON body.
const (
	JSONLimit      = 2_000_000
	MultipartLimit = 25_000_000
	SmallLimit     = 64 << 10
)

// Route is one row of the table. Path uses gin's syntax; SPEC's /api/og/:cuid.png is the
// single-segment parameter :file, whose handler requires the .png suffix.
type Route struct {
	ID      string
	Method  string
	Path    string
	Service string
	Access  Access
	MaxBody int64
}

// Route IDs, used by services to attach their handlers.
const (
	AuthPublish     = "auth.publish"
	PublishCreate   = "publish.create"
	NoteRead        = "note.read"
	NoteUpdate      = "note.update"
	NoteVersions    = "note.versions"
	NoteVersion     = "note.version"
	NoteUnshare     = "note.unshare"
	UserNotes       = "user.notes"
	SettingsRead    = "settings.read"
	SettingsReplace = "settings.replace"
	SettingsUpdate  = "settings.update"
	ImageRead       = "image.read"
	OGImage         = "og.image"
	NotePage        = "note.page"
	OpenAPIDocument = "openapi.document"
)

// Table is the public HTTP surface of SPEC.md "Endpoints".
var Table = []Route{
	{AuthPublish, "POST", "/api/auth/publish", Auth, License, SmallLimit},
	{PublishCreate, "POST", "/api/publish", Publish, Mutation, MultipartLimit},
	{NoteRead, "GET", "/api/notes/:cuid", Notes, Public, 0},
	{NoteUpdate, "PATCH", "/api/notes/:cuid", Notes, Mutation, JSONLimit},
	{NoteVersions, "GET", "/api/notes/:cuid/versions", Notes, Bearer, 0},
	{NoteVersion, "GET", "/api/notes/:cuid/versions/:version", Notes, Bearer, 0},
	{NoteUnshare, "POST", "/api/unshare", Notes, Mutation, SmallLimit},
	{UserNotes, "GET", "/api/user/notes", Notes, Bearer, 0},
	{SettingsRead, "GET", "/api/user/settings", Notes, Bearer, 0},
	{SettingsReplace, "PUT", "/api/user/settings", Notes, Mutation, SmallLimit},
	{SettingsUpdate, "PATCH", "/api/user/settings", Notes, Mutation, SmallLimit},
	{ImageRead, "GET", "/api/images/:userCuid/:noteCuid/:filename", Images, Public, 0},
	{OGImage, "GET", "/api/og/:file", OGRenderer, Public, 0},
	{NotePage, "GET", "/s/:cuid", Notes, Public, 0},
	{OpenAPIDocument, "GET", "/api/openapi.json", Notes, Public, 0},
}

// ForService returns the rows owned by service.
func ForService(service string) []Route {
	var out []Route
	for _, r := range Table {
		if r.Service == service {
			out = append(out, r)
		}
	}
	return out
}

// Print writes the table as aligned text, one route a line (`sharenote routes`).
func Print(w io.Writer) error {
	for _, r := range Table {
		if _, err := fmt.Fprintf(w, "%-6s %-44s %-12s %-9s %d\n", r.Method, r.Path, r.Service, r.Access, r.MaxBody); err != nil {
			return err
		}
	}
	return nil
}

// Match reports whether the request path matches the gin pattern, segment by segment.
func Match(pattern, path string) bool {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) || strings.HasSuffix(path, "/") != strings.HasSuffix(pattern, "/") {
		return false
	}
	for i, p := range ps {
		if strings.HasPrefix(p, ":") {
			if xs[i] == "" {
				return false
			}
		} else if p != xs[i] {
			return false
		}
	}
	return true
}
