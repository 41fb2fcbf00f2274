package routes_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/routes"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		name, pattern, path string
		want                bool
	}{
		{"a literal path matches itself", "/api/user/notes", "/api/user/notes", true},
		{"a parameter matches one segment", "/api/notes/:cuid", "/api/notes/abc", true},
		{"several parameters each match a segment", "/api/images/:userCuid/:noteCuid/:filename", "/api/images/u/n/a.png", true},
		{"a parameter in the middle matches", "/api/notes/:cuid/versions", "/api/notes/abc/versions", true},
		{"a parameter does not match an empty segment", "/api/notes/:cuid/versions", "/api/notes//versions", false},
		{"a parameter does not match two segments", "/api/notes/:cuid", "/api/notes/a/b", false},
		{"a parameter does not match a missing segment", "/api/notes/:cuid", "/api/notes", false},
		{"a trailing slash on the path does not match", "/api/notes/:cuid", "/api/notes/abc/", false},
		{"a trailing slash on the pattern only does not match", "/api/user/notes/", "/api/user/notes", false},
		{"a longer path does not match", "/api/user/notes", "/api/user/notes/extra", false},
		{"a shorter path does not match", "/api/user/notes", "/api/user", false},
		{"a different literal does not match", "/api/user/notes", "/api/user/settings", false},
		{"literals are case-sensitive", "/api/user/notes", "/API/user/notes", false},
		{"the parameter prefix is not a wildcard for literals", "/s/:cuid", "/x/abc", false},
		{"a dotted segment matches a parameter whole", "/api/og/:file", "/api/og/abc.png", true},
		{"a parameter inside a segment matches the rest of it", "/@:handle", "/@alice", true},
		{"a parameter inside a segment does not match its literal alone", "/@:handle", "/@", false},
		{"a parameter inside a segment needs its literal", "/@:handle", "/alice", false},
		{"a catch-all matches the rest", "/@:handle/*path", "/@alice/a/b/C%2B%2B", true},
		{"a catch-all matches an empty rest", "/@:handle/*path", "/@alice/", true},
		{"a catch-all needs its slash", "/@:handle/*path", "/@alice", false},
		{"a catch-all's head must match", "/@:handle/*path", "/s/alice/x", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := routes.Match(tc.pattern, tc.path); got != tc.want {
				t.Fatalf("Match(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
			}
		})
	}
}

func TestTableMethodAndPathAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range routes.Table {
		k := r.Method + " " + r.Path
		if seen[k] {
			t.Errorf("%s appears twice", k)
		}
		seen[k] = true
	}
}

func TestTableTargetsAreKnown(t *testing.T) {
	for _, r := range routes.Table {
		if !slices.Contains(routes.Targets, r.Target) {
			t.Errorf("%s %s belongs to %q, which is not in Targets %v", r.Method, r.Path, r.Target, routes.Targets)
		}
	}
	for _, target := range routes.Targets {
		if len(routes.ForTarget(target)) == 0 {
			t.Errorf("target %q serves no route", target)
		}
	}
}

type endpoint struct {
	method, path string
	access       routes.Access
}

// specEndpoints is the endpoint table of docs/api.md "Endpoints", with /api/og/:cuid.png
// written as the gin parameter the table uses, and the access class docs/api.md gives
// each (the five authenticated mutations of "Rate limits").
var specEndpoints = []endpoint{
	{"POST", "/api/auth/publish", routes.License},
	{"POST", "/api/publish", routes.Mutation},
	{"GET", "/api/notes/:cuid", routes.Public},
	{"PATCH", "/api/notes/:cuid", routes.Mutation},
	{"GET", "/api/notes/:cuid/versions", routes.Bearer},
	{"GET", "/api/notes/:cuid/versions/:version", routes.Bearer},
	{"POST", "/api/unshare", routes.Mutation},
	{"GET", "/api/user/notes", routes.Bearer},
	{"GET", "/api/user/settings", routes.Bearer},
	{"PUT", "/api/user/settings", routes.Mutation},
	{"PATCH", "/api/user/settings", routes.Mutation},
	{"GET", "/api/user/site", routes.Bearer},
	{"PUT", "/api/user/site", routes.Mutation},
	{"PATCH", "/api/user/site", routes.Mutation},
	{"GET", "/api/images/:userCuid/:noteCuid/:filename", routes.Public},
	{"GET", "/api/og/:file", routes.Public},
	{"GET", "/s/:cuid", routes.Public},
}

func find(method, path string) (*routes.Route, bool) {
	i := slices.IndexFunc(routes.Table, func(r *routes.Route) bool { return r.Method == method && r.Path == path })
	if i < 0 {
		return nil, false
	}
	return routes.Table[i], true
}

func TestTableHasEverySpecEndpointWithItsAccess(t *testing.T) {
	for _, e := range specEndpoints {
		r, ok := find(e.method, e.path)
		if !ok {
			t.Errorf("the API's endpoint %s %s is missing from the table", e.method, e.path)
			continue
		}
		if r.Access != e.access {
			t.Errorf("%s %s has access %s, want %s", e.method, e.path, r.Access, e.access)
		}
	}
}

func TestTableAccessClasses(t *testing.T) {
	mutations := []string{"POST /api/publish", "PATCH /api/notes/:cuid", "POST /api/unshare", "PUT /api/user/settings", "PATCH /api/user/settings",
		"PUT /api/user/site", "PATCH /api/user/site"}
	for _, r := range routes.Table {
		k := id(r)
		switch {
		case slices.Contains(mutations, k) != (r.Access == routes.Mutation):
			t.Errorf("%s has access %s; exactly the authenticated mutations count toward the mutation limit", k, r.Access)
		case (k == "POST /api/auth/publish") != (r.Access == routes.License):
			t.Errorf("%s has access %s; only POST /api/auth/publish takes license credentials", k, r.Access)
		case r.Access == routes.Public && r.Method != http.MethodGet:
			t.Errorf("%s is public but not a GET; every public route is a read", k)
		}
	}
	// The routes beyond the API's endpoints must not widen access: the OpenAPI document,
	// the scripts of diagram pages and the sites' pages are the only extras, and they are
	// public reads.
	extras := []*routes.Route{routes.OpenAPIDocument, routes.Asset, routes.SitePage, routes.SiteBare}
	for _, r := range routes.Table {
		inSpec := slices.ContainsFunc(specEndpoints, func(e endpoint) bool { return e.method == r.Method && e.path == r.Path })
		if !inSpec && !(slices.Contains(extras, r) && r.Method == "GET" && r.Access == routes.Public) {
			t.Errorf("%s %s is not one of the API's endpoints", r.Method, r.Path)
		}
	}
}

func TestTableBodyLimits(t *testing.T) {
	for _, r := range routes.Table {
		switch {
		case r.Method == http.MethodGet && r.MaxBody != 0:
			t.Errorf("%s %s takes no body but allows %d bytes", r.Method, r.Path, r.MaxBody)
		case r.Method != http.MethodGet && r.MaxBody <= 0:
			t.Errorf("%s %s has no body limit", r.Method, r.Path)
		}
	}
	// docs/api.md "Limits": a multipart publish up to 25,000,000 bytes; "Update": a
	// multipart update as much (its handler holds a JSON update to 2,000,000).
	for _, p := range [][2]string{{"POST", "/api/publish"}, {"PATCH", "/api/notes/:cuid"}} {
		if r, _ := find(p[0], p[1]); r.MaxBody != 25_000_000 {
			t.Errorf("%s %s allows %d bytes, want 25,000,000", p[0], p[1], r.MaxBody)
		}
	}
}

// concrete fills each parameter of a gin path with a sample value.
func concrete(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if literal, param, ok := strings.Cut(s, ":"); ok {
			segs[i] = literal + "x" + param + ".png"
		}
		if strings.HasPrefix(s, "*") {
			segs[i] = "a/C%2B%2B"
		}
	}
	return strings.Join(segs, "/")
}

// TestGinServesTheWholeTable registers every row on one gin engine, as the all-in-one
// process does, and checks that each row's own request reaches its handler and that
// Match agrees with gin about which row that is.
func TestGinServesTheWholeTable(t *testing.T) {
	gin.SetMode(gin.TestMode)
	engine := gin.New()
	for _, r := range routes.Table {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("gin cannot register %s %s: %v", r.Method, r.Path, p)
				}
			}()
			engine.Handle(r.Method, r.Path, func(c *gin.Context) { c.String(http.StatusOK, id(r)) })
		}()
	}
	for _, r := range routes.Table {
		path := concrete(r.Path)
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, httptest.NewRequest(r.Method, path, nil))
		if w.Code != http.StatusOK || w.Body.String() != id(r) {
			t.Errorf("%s %s reached %q (%d), want %s", r.Method, path, w.Body, w.Code, id(r))
		}
		var matched []string
		for _, other := range routes.Table {
			if other.Method == r.Method && routes.Match(other.Path, path) {
				matched = append(matched, id(other))
			}
		}
		if !slices.Equal(matched, []string{id(r)}) {
			t.Errorf("Match finds %v for %s %s, want only %s", matched, r.Method, path, id(r))
		}
	}
}

func TestPrintListsEveryRoute(t *testing.T) {
	var buf bytes.Buffer
	if err := routes.Print(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(routes.Table) {
		t.Fatalf("Print wrote %d lines for %d routes", len(lines), len(routes.Table))
	}
	for i, r := range routes.Table {
		if f := strings.Fields(lines[i]); len(f) != 5 || f[0] != r.Method || f[1] != r.Path || f[2] != r.Target || f[3] != r.Access.String() {
			t.Errorf("line %d = %q, want %s %s %s %s …", i, lines[i], r.Method, r.Path, r.Target, r.Access)
		}
	}
}

// id names a route in messages: its method and path.
func id(r *routes.Route) string { return r.Method + " " + r.Path }

func TestParseTargets(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"all", routes.Targets},
		{"notes", []string{routes.Notes}},
		{" og-renderer , auth,notes,auth", []string{routes.Auth, routes.Notes, routes.OGRenderer}},
		{"notes,all", routes.Targets},
	} {
		got, err := routes.ParseTargets(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseTargets(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "note", "notes,", "ALL", "notes images"} {
		if got, err := routes.ParseTargets(bad); err == nil {
			t.Errorf("ParseTargets(%q) = %v, want an error", bad, got)
		}
	}
}

func TestURLFillsTheParametersInOrder(t *testing.T) {
	const base = "https://share.example"
	cases := []struct {
		name   string
		route  *routes.Route
		params []string
		want   string
	}{
		{"a note's page", routes.NotePage, []string{"abc"}, base + "/s/abc"},
		{"an image names user, note and file in that order", routes.ImageRead, []string{"u1", "n1", "a.png"},
			base + "/api/images/u1/n1/a.png"},
		{"a filename is escaped as one path segment", routes.ImageRead, []string{"u1", "n1", "my photo#1?/x.png"},
			base + "/api/images/u1/n1/my%20photo%231%3F%2Fx.png"},
		{"a dotted parameter stays whole", routes.OGImage, []string{"abc.png"}, base + "/api/og/abc.png"},
		{"a route without parameters is its path", routes.UserNotes, nil, base + "/api/user/notes"},
		{"a parameter between literals", routes.NoteVersion, []string{"abc", "3"}, base + "/api/notes/abc/versions/3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.route.URL(base, tc.params...)
			if got != tc.want {
				t.Fatalf("URL = %q, want %q", got, tc.want)
			}
			if !routes.Match(tc.route.Path, strings.TrimPrefix(got, base)) {
				t.Errorf("the URL %q does not match its own route %s", got, tc.route.Path)
			}
		})
	}
}

func TestURLWithTheWrongNumberOfParametersPanics(t *testing.T) {
	for _, params := range [][]string{nil, {"u1", "n1"}, {"u1", "n1", "a.png", "extra"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ImageRead.URL with %d parameters did not panic", len(params))
				}
			}()
			routes.ImageRead.URL("", params...)
		}()
	}
}
