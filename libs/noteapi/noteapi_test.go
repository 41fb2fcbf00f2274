package noteapi_test

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/errs"
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
