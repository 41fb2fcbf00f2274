package account_test

import (
	"errors"
	"image/color"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/account"
)

// custom differs from the defaults in every field, so that a test sees which fields a
// change kept and which it reset.
var custom = account.Settings{Name: "Pen Name", ShowAuthor: false, Theme: "dark", AccentColor: "#112233", Font: "mono", Indexable: true}

func TestDefaultSettings(t *testing.T) {
	want := account.Settings{Name: "Ada", ShowAuthor: true, Theme: "system", AccentColor: "#5b6ee1", Font: "sans", Indexable: false}
	if got := account.DefaultSettings("Ada"); got != want {
		t.Fatalf("DefaultSettings = %+v, want the defaults of docs/api.md %+v", got, want)
	}
}

func TestSettingsChangeApplies(t *testing.T) {
	cases := []struct {
		name   string
		change account.SettingsChange
		want   account.Settings
	}{
		{"PUT resets every field not given to the account's defaults", account.SettingsChange{Replace: true, Theme: new("light")},
			account.Settings{Name: "Ada", ShowAuthor: true, Theme: "light", AccentColor: "#5b6ee1", Font: "sans"}},
		{"PUT with no field restores the defaults", account.SettingsChange{Replace: true}, account.DefaultSettings("Ada")},
		{"PUT sets every given field", account.SettingsChange{Replace: true, Name: new("A. L."), ShowAuthor: new(false), Theme: new("dark"),
			AccentColor: new("#000000"), Font: new("serif"), Indexable: new(true)},
			account.Settings{Name: "A. L.", ShowAuthor: false, Theme: "dark", AccentColor: "#000000", Font: "serif", Indexable: true}},
		{"PATCH keeps every field not given", account.SettingsChange{Theme: new("light")},
			account.Settings{Name: "Pen Name", ShowAuthor: false, Theme: "light", AccentColor: "#112233", Font: "mono", Indexable: true}},
		{"PATCH with no field changes nothing", account.SettingsChange{}, custom},
		{"PATCH can turn booleans off and on", account.SettingsChange{ShowAuthor: new(true), Indexable: new(false)},
			account.Settings{Name: "Pen Name", ShowAuthor: true, Theme: "dark", AccentColor: "#112233", Font: "mono", Indexable: false}},
		{"an uppercase colour is stored lowercase", account.SettingsChange{AccentColor: new("#ABCDEF")},
			account.Settings{Name: "Pen Name", Theme: "dark", AccentColor: "#abcdef", Font: "mono", Indexable: true}},
		{"a name of 100 characters is accepted", account.SettingsChange{Name: new(strings.Repeat("é", 100))},
			account.Settings{Name: strings.Repeat("é", 100), Theme: "dark", AccentColor: "#112233", Font: "mono", Indexable: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.change.Apply(custom, "Ada")
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Apply\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestSettingsChangeRejects(t *testing.T) {
	cases := []struct {
		name   string
		change account.SettingsChange
		field  string
	}{
		{"an unknown theme is rejected", account.SettingsChange{Theme: new("blue")}, "theme"},
		{"themes are case-sensitive", account.SettingsChange{Theme: new("Dark")}, "theme"},
		{"an unknown font is rejected", account.SettingsChange{Font: new("comic")}, "font"},
		{"a colour name is not #rrggbb", account.SettingsChange{AccentColor: new("red")}, "accent_color"},
		{"a short colour is not #rrggbb", account.SettingsChange{AccentColor: new("#fff")}, "accent_color"},
		{"a colour without # is rejected", account.SettingsChange{AccentColor: new("5b6ee1")}, "accent_color"},
		{"a colour with a non-hex digit is rejected", account.SettingsChange{AccentColor: new("#5b6ee g")}, "accent_color"},
		{"a colour with alpha is rejected", account.SettingsChange{AccentColor: new("#5b6ee1ff")}, "accent_color"},
		{"an empty name is rejected", account.SettingsChange{Name: new("")}, "name"},
		{"a blank name is rejected", account.SettingsChange{Name: new("   ")}, "name"},
		{"a name of 101 characters is rejected", account.SettingsChange{Name: new(strings.Repeat("a", 101))}, "name"},
		{"a name with a control character is rejected", account.SettingsChange{Name: new("Ada\nLovelace")}, "name"},
	}
	for _, tc := range cases {
		for _, replace := range []bool{true, false} {
			method := map[bool]string{true: "PUT", false: "PATCH"}[replace]
			t.Run(tc.name+" on "+method, func(t *testing.T) {
				tc.change.Replace = replace
				_, err := tc.change.Apply(custom, "Ada")
				var fe *account.FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("Apply = %v, want a *FieldError", err)
				}
				if fe.Field != tc.field || fe.Reason == "" || !strings.HasPrefix(fe.Error(), tc.field+" ") {
					t.Fatalf("Apply = FieldError{%q, %q}, want field %q with a reason", fe.Field, fe.Reason, tc.field)
				}
			})
		}
	}
}

func TestAccentIsTheStoredColourOrTheDefault(t *testing.T) {
	for _, tc := range []struct {
		stored string
		want   color.NRGBA
	}{
		{"#112233", color.NRGBA{R: 0x11, G: 0x22, B: 0x33, A: 0xff}},
		{"#A0b0C0", color.NRGBA{R: 0xa0, G: 0xb0, B: 0xc0, A: 0xff}},
		{"red", color.NRGBA{R: 0x5b, G: 0x6e, B: 0xe1, A: 0xff}}, // A row written around Validate.
		{"#12345g", color.NRGBA{R: 0x5b, G: 0x6e, B: 0xe1, A: 0xff}},
	} {
		if got := (account.Settings{AccentColor: tc.stored}).Accent(); got != tc.want {
			t.Errorf("Accent of %q = %v, want %v", tc.stored, got, tc.want)
		}
	}
}
