package noteapi_test

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
)

func TestQuery(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want map[string]string
		code string
	}{
		{"no query string", "", map[string]string{}, ""},
		{"known parameters are decoded", "cursor=a%2Bb&limit=5", map[string]string{"cursor": "a+b", "limit": "5"}, ""},
		{"unknown parameters are ignored", "utm_source=x&fbclid=IwAR0&limit=2&utm_campaign=a%20b", map[string]string{"limit": "2"}, ""},
		{"an empty value is kept", "cursor=", map[string]string{"cursor": ""}, ""},
		{"empty pairs are skipped", "&&limit=3&", map[string]string{"limit": "3"}, ""},
		{"a malformed cursor is invalid_cursor", "cursor=%%%garbage", nil, errs.InvalidCursor},
		{"a malformed escape in the cursor is invalid_cursor", "limit=1&cursor=abc%zz", nil, errs.InvalidCursor},
		{"a truncated escape in the limit is invalid_limit", "limit=1%2", nil, errs.InvalidLimit},
		{"an escaped known name still names the parameter", "cur%73or=%", nil, errs.InvalidCursor},
		{"a malformed unknown parameter is invalid_field", "utm_source=%zz&limit=1", nil, errs.InvalidField},
		{"a malformed name is invalid_field", "%zz=1", nil, errs.InvalidField},
		{"a semicolon separator is invalid_field", "a=1;limit=2", nil, errs.InvalidField},
		{"a repeated limit is invalid_limit", "limit=1&limit=2", nil, errs.InvalidLimit},
		{"a repeated cursor is invalid_cursor", "cursor=a&limit=1&cursor=a", nil, errs.InvalidCursor},
		{"a repeated unknown parameter is ignored", "utm=1&utm=2", map[string]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := noteapi.Query(tt.raw, "cursor", "limit")
			if tt.code == "" {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("Query(%q) = %v, %v; want %v", tt.raw, got, err, tt.want)
				}
				return
			}
			var e *errs.Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Code != tt.code || e.Message == "" {
				t.Fatalf("Query(%q) = %v, %v; want 400 %s", tt.raw, got, err, tt.code)
			}
			if strings.Contains(e.Message, "garbage") || strings.Contains(e.Message, "%zz") {
				t.Errorf("the message %q echoes the query string", e.Message)
			}
		})
	}
}

func TestPropertiesNestingIsCapped(t *testing.T) {
	deep := func(depth int, open, close string) string {
		return `{"a":` + strings.Repeat(open, depth-1) + "1" + strings.Repeat(close, depth-1) + "}"
	}
	for _, tt := range []struct {
		name string
		raw  string
		ok   bool
	}{
		{"an object at the limit", deep(note.MaxPropertiesDepth, `{"a":`, "}"), true},
		{"an array at the limit", deep(note.MaxPropertiesDepth, "[", "]"), true},
		{"an object one level deeper", deep(note.MaxPropertiesDepth+1, `{"a":`, "}"), false},
		{"an array one level deeper", deep(note.MaxPropertiesDepth+1, "[", "]"), false},
		{"an object 10,000 levels deep", deep(10_000, `{"a":`, "}"), false},
		{"an array 10,000 levels deep", deep(10_000, "[", "]"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := note.ParseProperties([]byte(tt.raw))
			if tt.ok {
				if err != nil || m == nil {
					t.Fatalf("ParseProperties = %v, %v; want the object", m, err)
				}
				return
			}
			if e := errs.As(err, noteapi.Translate); err == nil || e.Status != http.StatusBadRequest || e.Code != errs.InvalidProperties ||
				!strings.Contains(e.Message, "32 levels") {
				t.Fatalf("ParseProperties = %v, %v; want 400 invalid_properties naming the limit", m, err)
			}
		})
	}
}
