package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"

	"github.com/sharenote/sharenote/libs/openapi"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
)

func load(t *testing.T, data []byte) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return doc
}

func TestDocumentIsValidOpenAPI(t *testing.T) {
	for name, data := range map[string][]byte{"yaml": openapi.YAML(), "json": openapi.JSON()} {
		t.Run(name, func(t *testing.T) {
			doc := load(t, data)
			if err := doc.Validate(context.Background()); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if doc.OpenAPI != "3.0.3" {
				t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
			}
		})
	}
}

func TestJSONHasTheContentOfTheYAML(t *testing.T) {
	j := openapi.JSON()
	if !json.Valid(j) {
		t.Fatal("JSON() is not valid JSON")
	}
	var fromJSON, fromYAML any
	if err := json.Unmarshal(j, &fromJSON); err != nil {
		t.Fatal(err)
	}
	var y any
	if err := yaml.Unmarshal(openapi.YAML(), &y); err != nil {
		t.Fatal(err)
	}
	// Round-trip the YAML value through encoding/json so that both sides use the same Go
	// types (float64 numbers, map[string]any).
	b, err := json.Marshal(y)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fromYAML); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON, fromYAML) {
		t.Error("JSON() and the YAML source differ in content")
	}
	if !json.Valid(j) || bytes.HasSuffix(j, []byte("\n")) || !bytes.Contains(j, []byte(`"openapi":"3.0.3"`)) {
		t.Errorf("JSON() is not the compact document: %.60s", j)
	}
	// Each call returns its own copy.
	j[0] = 'x'
	if openapi.JSON()[0] != '{' {
		t.Error("changing the result of JSON() changed the cached document")
	}
}

var ginParam = regexp.MustCompile(`[:*]([A-Za-z]+)`)

// openAPIPath converts a gin path of the routes table to OpenAPI syntax.
func openAPIPath(ginPath string) string { return ginParam.ReplaceAllString(ginPath, "{$1}") }

func TestEveryRouteIsDocumentedAndNothingElse(t *testing.T) {
	doc := load(t, openapi.YAML())
	type key struct{ method, path string }
	inTable := map[key]*routes.Route{}
	for _, r := range routes.Table {
		inTable[key{r.Method, openAPIPath(r.Path)}] = r
	}
	inDoc := map[key]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			inDoc[key{method, path}] = op
		}
	}
	for k, r := range inTable {
		if inDoc[k] == nil {
			t.Errorf("route %s %s has no operation in the document", r.Method, r.Path)
		}
	}
	for k := range inDoc {
		if _, ok := inTable[k]; !ok {
			t.Errorf("operation %s %s is not a route of routes.Table", k.method, k.path)
		}
	}

	// The rows' access class and body limit show in the operations' security and responses.
	for k, r := range inTable {
		op := inDoc[k]
		if op == nil {
			continue
		}
		bearer := r.Access == routes.Bearer || r.Access == routes.Mutation
		if got := op.Security != nil && len(*op.Security) == 1 && (*op.Security)[0]["bearer"] != nil; got != bearer {
			t.Errorf("%s %s: bearer security = %v, want %v (access %s)", r.Method, r.Path, got, bearer, r.Access)
		}
		want := []string{"429", "500", "503"}
		if bearer || r.Access == routes.License {
			want = append(want, "401")
		}
		if r.MaxBody > 0 {
			// 408: a body that arrives below the minimum rate.
			want = append(want, "400", "408", "413")
			if op.RequestBody == nil || !op.RequestBody.Value.Required {
				t.Errorf("%s %s: takes a body but documents no required request body", r.Method, r.Path)
			}
		}
		if strings.Contains(r.Path, ":cuid") {
			want = append(want, "404")
		}
		for _, status := range want {
			if op.Responses.Value(status) == nil {
				t.Errorf("%s %s: response %s is not documented", r.Method, r.Path, status)
			}
		}
		if r.Access == routes.Mutation && !strings.Contains(op.Description, "authenticated mutations") {
			t.Errorf("%s %s: the description does not name the mutation rate limit", r.Method, r.Path)
		}
	}
}

func TestErrorCodesAreTheContractList(t *testing.T) {
	doc := load(t, openapi.YAML())
	var codes []string
	for _, v := range doc.Components.Schemas["Error"].Value.Properties["error"].Value.Enum {
		codes = append(codes, v.(string))
	}
	// The list of docs/api.md "Errors", where range_not_satisfiable is the one code of a
	// single route: image reads answer Range requests, and a range outside the image is a
	// 416 of its own.
	want := []string{
		"invalid_body", "invalid_field", "invalid_properties", "invalid_image", "invalid_version",
		"invalid_cursor", "invalid_limit", "unsupported_content_type", "unauthorized", "not_found",
		"method_not_allowed", "request_timeout", "precondition_failed", "payload_too_large", "note_too_large", "image_too_large",
		"range_not_satisfiable", "storage_quota_exceeded", "too_many_images", "rate_limited", "internal_error", "service_unavailable",
	}
	if !slices.Equal(codes, want) {
		t.Errorf("error codes = %q, want %q", codes, want)
	}
}

// recorder is a testing.TB that keeps failures instead of reporting them.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatal(args ...any) { r.failures = append(r.failures, fmt.Sprint(args...)) }

func TestValidatorChecksResponsesAgainstTheDocument(t *testing.T) {
	const (
		jsonType  = "application/json; charset=utf-8"
		cuid      = "k3v9x2m0q8w1e7r4t6y5u2i0"
		settings  = `{"settings":{"name":"Ada","show_author":true,"theme":"system","accent_color":"#5b6ee1","font":"sans","indexable":false},"storage":{"image_bytes_used":0,"image_limit_bytes":1000000000}}`
		notFound  = `{"error":"not_found","message":"Not found."}`
		limited   = `{"error":"rate_limited","message":"Too many requests."}`
		pngHeader = "\x89PNG\r\n\x1a\n"
	)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	cached := func(contentType string) http.Header {
		return h("Content-Type", contentType, "Cache-Control", "public, max-age=60", "ETag", `"abc"`)
	}
	cases := []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		ok                 bool
	}{
		{"settings as documented", "GET", "/api/user/settings", 200, h("Content-Type", jsonType), settings, true},
		{"settings with an extra field", "GET", "/api/user/settings", 200, h("Content-Type", jsonType),
			strings.Replace(settings, `"font"`, `"colour":"red","font"`, 1), false},
		{"settings with an upper-case colour", "GET", "/api/user/settings", 200, h("Content-Type", jsonType),
			strings.Replace(settings, "5b6ee1", "5B6EE1", 1), false},
		{"settings without storage", "GET", "/api/user/settings", 200, h("Content-Type", jsonType),
			settings[:strings.Index(settings, `,"storage"`)] + "}", false},
		{"undocumented status", "GET", "/api/user/settings", 404, h("Content-Type", jsonType), notFound, false},
		{"error code of another status", "GET", "/api/user/settings", 401, h("Content-Type", jsonType), notFound, false},
		{"error without message", "GET", "/api/user/settings", 401, h("Content-Type", jsonType), `{"error":"unauthorized"}`, false},
		{"429 with Retry-After", "PUT", "/api/user/settings", 429, h("Content-Type", jsonType, "Retry-After", "3"), limited, true},
		{"429 without Retry-After", "PUT", "/api/user/settings", 429, h("Content-Type", jsonType), limited, false},
		{"token with a time without milliseconds", "POST", "/api/auth/publish", 200, h("Content-Type", jsonType),
			`{"token":"t","expires_at":"2026-11-22T10:00:00Z","user_cuid":"` + cuid + `","user":{"name":"a","email":"b"}}`, false},
		{"unknown path answers not_found", "GET", "/nowhere", 404, h("Content-Type", jsonType), notFound, true},
		{"unknown path answers 200", "GET", "/nowhere", 200, h("Content-Type", jsonType), `{}`, false},
		{"unknown path is rate limited", "GET", "/nowhere", 429, h("Content-Type", jsonType, "Retry-After", "1"), limited, true},
		{"trailing slash is an unknown path", "GET", "/api/user/settings/", 404, h("Content-Type", jsonType), notFound, true},
		{"wrong method with Allow", "DELETE", "/api/user/settings", 405, h("Content-Type", jsonType, "Allow", "GET, PATCH, PUT"),
			`{"error":"method_not_allowed","message":"DELETE is not allowed here."}`, true},
		{"wrong method without Allow", "DELETE", "/api/user/settings", 405, h("Content-Type", jsonType),
			`{"error":"method_not_allowed","message":"DELETE is not allowed here."}`, false},
		{"image", "GET", "/api/images/" + cuid + "/" + cuid + "/a%20b.png", 200,
			func() http.Header { x := cached("image/png"); x.Set("X-Content-Type-Options", "nosniff"); return x }(), pngHeader, true},
		{"image without nosniff", "GET", "/api/images/" + cuid + "/" + cuid + "/a.png", 200, cached("image/png"), pngHeader, false},
		{"image as text", "GET", "/api/images/" + cuid + "/" + cuid + "/a.png", 200,
			func() http.Header { x := cached("text/plain"); x.Set("X-Content-Type-Options", "nosniff"); return x }(), "x", false},
		{"note page", "GET", "/s/" + cuid, 200, cached("text/html; charset=utf-8"), "<!doctype html><p>hi</p>", true},
		{"note page cached too long", "GET", "/s/" + cuid, 200,
			h("Content-Type", "text/html", "Cache-Control", "public, max-age=300", "ETag", `"abc"`), "<p>hi</p>", false},
		{"note page with a weak ETag", "GET", "/s/" + cuid, 200,
			h("Content-Type", "text/html", "Cache-Control", "public, max-age=30", "ETag", `W/"abc"`), "<p>hi</p>", false},
		{"note page 404 is HTML", "GET", "/s/" + cuid, 404, h("Content-Type", "text/html"), "<p>gone</p>", true},
		{"note data 304", "GET", "/api/notes/" + cuid, 304, h("ETag", `"abc"`), "", true},
		{"304 where none is documented", "GET", "/api/user/notes", 304, h(), "", false},
		{"og image", "GET", "/api/og/" + cuid + ".png", 200, cached("image/png"), pngHeader, true},
		{"list page", "GET", "/api/user/notes?limit=1", 200, h("Content-Type", jsonType),
			`{"notes":[{"cuid":"` + cuid + `","url":"http://x/s/` + cuid + `","title":null,"summary":null,"path":"Garden/Plan.md","status":"active",` +
				`"created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z","expires_at":null,"etag":"e1"}],"next_cursor":null}`, true},
		{"list page with a null list", "GET", "/api/user/notes", 200, h("Content-Type", jsonType), `{"notes":null,"next_cursor":null}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, "http://127.0.0.1:1"+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := &recorder{TB: t}
			testkit.ValidateResponse(r, req, c.status, c.header, []byte(c.body))
			for _, f := range r.failures {
				t.Log(f)
			}
			if ok := len(r.failures) == 0; ok != c.ok {
				t.Errorf("valid = %v, want %v; failures: %q", ok, c.ok, r.failures)
			}
		})
	}
}

func TestDocsLinkShowsTheDocument(t *testing.T) {
	target, err := os.Readlink("../../docs/openapi.yaml")
	if err != nil {
		t.Fatalf("docs/openapi.yaml is not a symlink: %v", err)
	}
	if target != "../libs/openapi/openapi.yaml" {
		t.Errorf("docs/openapi.yaml links to %q, want the relative ../libs/openapi/openapi.yaml", target)
	}
	b, err := os.ReadFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, openapi.YAML()) {
		t.Error("docs/openapi.yaml differs from the embedded document")
	}
}
