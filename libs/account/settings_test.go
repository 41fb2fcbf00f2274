package account_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/account"
)

// custom differs from the defaults in every field, so that a test sees which fields a
// change kept and which it reset.
var custom = account.Settings{Name: "Pen Name", ShowAuthor: false, Theme: "dark", AccentColor: "#112233", Font: "mono", Indexable: true}

// fields parses a JSON object the way the HTTP edge does before calling ApplySettings.
func fields(t *testing.T, body string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("test body %s: %v", body, err)
	}
	return m
}

func TestDefaultSettings(t *testing.T) {
	want := account.Settings{Name: "Ada", ShowAuthor: true, Theme: "system", AccentColor: "#5b6ee1", Font: "sans", Indexable: false}
	if got := account.DefaultSettings("Ada"); got != want {
		t.Fatalf("DefaultSettings = %+v, want CONTRACT.md's %+v", got, want)
	}
}

func TestApplySettingsChanges(t *testing.T) {
	cases := []struct {
		name    string
		body    string
		replace bool
		want    account.Settings
	}{
		{"PUT resets every missing field to the account's defaults", `{"theme":"light"}`, true,
			account.Settings{Name: "Ada", ShowAuthor: true, Theme: "light", AccentColor: "#5b6ee1", Font: "sans"}},
		{"PUT with an empty object restores the defaults", `{}`, true, account.DefaultSettings("Ada")},
		{"PUT sets every given field", `{"name":"A. L.","show_author":false,"theme":"dark","accent_color":"#000000","font":"serif","indexable":true}`, true,
			account.Settings{Name: "A. L.", ShowAuthor: false, Theme: "dark", AccentColor: "#000000", Font: "serif", Indexable: true}},
		{"PATCH keeps every field not given", `{"theme":"light"}`, false,
			account.Settings{Name: "Pen Name", ShowAuthor: false, Theme: "light", AccentColor: "#112233", Font: "mono", Indexable: true}},
		{"PATCH with an empty object changes nothing", `{}`, false, custom},
		{"PATCH can turn booleans off and on", `{"show_author":true,"indexable":false}`, false,
			account.Settings{Name: "Pen Name", ShowAuthor: true, Theme: "dark", AccentColor: "#112233", Font: "mono", Indexable: false}},
		{"an uppercase colour is stored lowercase", `{"accent_color":"#ABCDEF"}`, false,
			account.Settings{Name: "Pen Name", Theme: "dark", AccentColor: "#abcdef", Font: "mono", Indexable: true}},
		{"a name of 100 characters is accepted", `{"name":"` + strings.Repeat("é", 100) + `"}`, false,
			account.Settings{Name: strings.Repeat("é", 100), Theme: "dark", AccentColor: "#112233", Font: "mono", Indexable: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := account.ApplySettings(custom, "Ada", fields(t, tc.body), tc.replace)
			if err != nil {
				t.Fatalf("ApplySettings(%s): %v", tc.body, err)
			}
			if got != tc.want {
				t.Fatalf("ApplySettings(%s)\n got %+v\nwant %+v", tc.body, got, tc.want)
			}
		})
	}
}

func TestApplySettingsRejects(t *testing.T) {
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
		{"an unknown theme is rejected", `{"theme":"blue"}`, "theme"},
		{"themes are case-sensitive", `{"theme":"Dark"}`, "theme"},
		{"an unknown font is rejected", `{"font":"comic"}`, "font"},
		{"a colour name is not #rrggbb", `{"accent_color":"red"}`, "accent_color"},
		{"a short colour is not #rrggbb", `{"accent_color":"#fff"}`, "accent_color"},
		{"a colour without # is rejected", `{"accent_color":"5b6ee1"}`, "accent_color"},
		{"a colour with a non-hex digit is rejected", `{"accent_color":"#5b6ee g"}`, "accent_color"},
		{"a colour with alpha is rejected", `{"accent_color":"#5b6ee1ff"}`, "accent_color"},
		{"an empty name is rejected", `{"name":""}`, "name"},
		{"a blank name is rejected", `{"name":"   "}`, "name"},
		{"a name of 101 characters is rejected", `{"name":"` + strings.Repeat("a", 101) + `"}`, "name"},
		{"a name with a control character is rejected", `{"name":"Ada\nLovelace"}`, "name"},
		{"the first bad field in key order is reported", `{"zzz":1,"font":3}`, "font"},
	}
	for _, tc := range cases {
		for _, replace := range []bool{true, false} {
			method := map[bool]string{true: "PUT", false: "PATCH"}[replace]
			t.Run(tc.name+" on "+method, func(t *testing.T) {
				_, err := account.ApplySettings(custom, "Ada", fields(t, tc.body), replace)
				var fe *account.FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("ApplySettings(%s) = %v, want a *FieldError", tc.body, err)
				}
				if fe.Field != tc.field || fe.Reason == "" || !strings.HasPrefix(fe.Error(), tc.field+" ") {
					t.Fatalf("ApplySettings(%s) = FieldError{%q, %q}, want field %q with a reason", tc.body, fe.Field, fe.Reason, tc.field)
				}
			})
		}
	}
}
