package openapi_test

import (
	"net/http"
	"testing"

	"github.com/sharenote/sharenote/libs/openapi"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestMutationsDocumentTheBudgetAndNothingElseDoes(t *testing.T) {
	// The RateLimit fields of docs/api.md "Rate limits".
	budgetHeaders := []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}
	doc := load(t, openapi.YAML())
	for _, r := range routes.Table {
		op := doc.Paths.Find(openAPIPath(r.Path)).GetOperation(r.Method)
		if op == nil {
			t.Errorf("%s %s has no operation", r.Method, r.Path)
			continue
		}
		for status, ref := range op.Responses.Map() {
			mutation := r.Access == routes.Mutation && (status == "200" || status == "429")
			for _, name := range budgetHeaders {
				h := ref.Value.Headers[name]
				switch {
				case mutation && h == nil:
					t.Errorf("%s %s %s: %s is not documented", r.Method, r.Path, status, name)
				case mutation && h.Value.Required:
					t.Errorf("%s %s %s: %s is required, but it is left out while the limit fails open", r.Method, r.Path, status, name)
				case r.Access != routes.Mutation && h != nil:
					t.Errorf("%s %s %s: %s is documented on an operation that is no mutation", r.Method, r.Path, status, name)
				}
			}
		}
	}
}

func TestValidatorChecksTheBudget(t *testing.T) {
	const (
		jsonType = "application/json; charset=utf-8"
		limited  = `{"error":"rate_limited","message":"Too many requests; retry in 1 s."}`
		settings = `{"settings":{"name":"Ada","show_author":true,"theme":"system","accent_color":"#5b6ee1","font":"sans","indexable":false},"storage":{"image_bytes_used":0,"image_limit_bytes":1000000000}}`
	)
	h := func(kv ...string) http.Header {
		out := http.Header{"Content-Type": {jsonType}}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	cases := []struct {
		name, method string
		status       int
		header       http.Header
		body         string
		ok           bool
	}{
		{"a change with its budget", "PATCH", 200, h("RateLimit-Limit", "60", "RateLimit-Remaining", "59", "RateLimit-Reset", "1"), settings, true},
		{"a change while the limit fails open", "PUT", 200, h(), settings, true},
		{"a change with the all-API limit", "PATCH", 200, h("RateLimit-Limit", "600", "RateLimit-Remaining", "59", "RateLimit-Reset", "1"), settings, false},
		{"a change with a negative budget", "PATCH", 200, h("RateLimit-Limit", "60", "RateLimit-Remaining", "-1", "RateLimit-Reset", "1"), settings, false},
		{"a 429 with its budget", "PUT", 429, h("Retry-After", "1", "RateLimit-Limit", "60", "RateLimit-Remaining", "0", "RateLimit-Reset", "60"), limited, true},
		{"a per-IP 429", "PUT", 429, h("Retry-After", "1"), limited, true},
		{"a 429 whose reset is not whole seconds", "PUT", 429, h("Retry-After", "1", "RateLimit-Limit", "60", "RateLimit-Remaining", "0", "RateLimit-Reset", "0.5"), limited, false},
		{"a 429 without Retry-After", "PATCH", 429, h("RateLimit-Limit", "60", "RateLimit-Remaining", "0", "RateLimit-Reset", "60"), limited, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, "http://127.0.0.1:1/api/user/settings", nil)
			if err != nil {
				t.Fatal(err)
			}
			r := &recorder{TB: t}
			testkit.ValidateResponse(r, req, c.status, c.header, []byte(c.body))
			if ok := len(r.failures) == 0; ok != c.ok {
				t.Errorf("valid = %v, want %v; failures: %q", ok, c.ok, r.failures)
			}
		})
	}
}
