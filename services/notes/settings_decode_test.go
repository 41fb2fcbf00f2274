package notes

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/noteapi"
)

// fields parses a JSON object the way the handler does before decodeSettingsChange.
func fields(t *testing.T, body string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("test body %s: %v", body, err)
	}
	return m
}

func TestDecodeSettingsChange(t *testing.T) {
	all := `{"name":"A. L.","show_author":false,"theme":"dark","accent_color":"#000000","font":"serif","indexable":true}`
	for _, replace := range []bool{true, false} {
		ch, err := decodeSettingsChange(fields(t, all), replace)
		if err != nil {
			t.Fatalf("decodeSettingsChange(%s): %v", all, err)
		}
		want := account.Settings{Name: "A. L.", ShowAuthor: false, Theme: "dark", AccentColor: "#000000", Font: "serif", Indexable: true}
		if got, err := ch.Apply(account.DefaultSettings("Ada"), "Ada"); err != nil || got != want || ch.Replace != replace {
			t.Fatalf("the change of %s (replace %v) gives %+v, %v (replace %v); want %+v", all, replace, got, err, ch.Replace, want)
		}
	}
	ch, err := decodeSettingsChange(fields(t, `{"theme":"light"}`), false)
	if err != nil || ch.Theme == nil || *ch.Theme != "light" || ch.Name != nil || ch.ShowAuthor != nil || ch.Indexable != nil ||
		ch.AccentColor != nil || ch.Font != nil {
		t.Fatalf("decodeSettingsChange({theme}) = %+v, %v; want only the theme given", ch, err)
	}
}

// TestDecodeSettingsChangeRejects covers the faults of the JSON itself; the values the
// domain refuses are account's tests. Each is a *account.FieldError naming the field,
// which the client hears of as 400 invalid_field.
func TestDecodeSettingsChangeRejects(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		field string
	}{
		{"an unknown field is rejected", `{"colour":"#000000"}`, "colour"},
		{"a field of the public response is not a settings field", `{"accentColor":"#000000"}`, "accentColor"},
		{"null is not a way to reset a string", `{"theme":null}`, "theme"},
		{"null is not a way to reset a boolean", `{"show_author":null}`, "show_author"},
		{"a number is not a name", `{"name":5}`, "name"},
		{"a string is not a boolean", `{"show_author":"yes"}`, "show_author"},
		{"a number is not a boolean", `{"indexable":1}`, "indexable"},
		{"a boolean is not a theme", `{"theme":true}`, "theme"},
		{"an object is not a font", `{"font":{"family":"serif"}}`, "font"},
		{"the first bad field in key order is reported", `{"zzz":1,"font":3}`, "font"},
	}
	for _, tc := range cases {
		for _, replace := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: " on PUT", false: " on PATCH"}[replace], func(t *testing.T) {
				_, err := decodeSettingsChange(fields(t, tc.body), replace)
				var fe *account.FieldError
				if !errors.As(err, &fe) || fe.Field != tc.field || fe.Reason == "" {
					t.Fatalf("decodeSettingsChange(%s) = %v, want a *FieldError for %q", tc.body, err, tc.field)
				}
				if e := errs.As(err, noteapi.Translate); e.Status != http.StatusBadRequest || e.Code != errs.InvalidField ||
					!strings.HasPrefix(e.Message, "Settings field "+tc.field+" ") {
					t.Errorf("the client hears %d %s %q", e.Status, e.Code, e.Message)
				}
			})
		}
	}
}
