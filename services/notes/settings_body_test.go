package notes_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/wire"
)

// TestSettingsBodies sends settings bodies through the stack: both methods read the
// body into wire.SettingsInput, only its fields are taken, and a fault of the JSON itself
// is 400 invalid_field naming the field and changes nothing. The values the domain
// refuses are account's tests.
func TestSettingsBodies(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		send := func(t *testing.T, method, body string) *testkit.Response {
			return f.Do(t, testkit.Request{Method: method, Path: "/api/user/settings", Token: f.acc.Token,
				Body: []byte(body), ContentType: "application/json"})
		}
		settings := func(r *testkit.Response) wire.Settings {
			var p wire.Profile
			r.Decode(t, &p)
			return p.Settings
		}
		all := `{"name":"A. L.","show_author":false,"theme":"dark","accent_color":"#000000","font":"serif","indexable":true}`
		want := wire.Settings{Name: "A. L.", ShowAuthor: false, Theme: "dark", AccentColor: "#000000", Font: "serif", Indexable: true}
		for _, method := range []string{"PUT", "PATCH"} {
			if got := settings(send(t, method, all).Expect(t, http.StatusOK, "")); got != want {
				t.Fatalf("%s %s gives %+v, want %+v", method, all, got, want)
			}
		}
		want.Theme = "light"
		if got := settings(send(t, "PATCH", `{"theme":"light"}`).Expect(t, http.StatusOK, "")); got != want {
			t.Fatalf("PATCH {theme} gives %+v, want only the theme changed: %+v", got, want)
		}
		send(t, "PATCH", `{}`).Expect(t, http.StatusBadRequest, "invalid_body")

		for _, tc := range []struct {
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
			{"a bad value is reported before an unknown field", `{"zzz":1,"font":3}`, "font"},
		} {
			for _, method := range []string{"PUT", "PATCH"} {
				t.Run(tc.name+" on "+method, func(t *testing.T) {
					r := send(t, method, tc.body).Expect(t, http.StatusBadRequest, "invalid_field")
					var e struct{ Message string }
					if err := json.Unmarshal(r.Body, &e); err != nil || !strings.Contains(e.Message, `"`+tc.field+`"`) {
						t.Errorf("the message %q does not name %s", e.Message, tc.field)
					}
				})
			}
		}
		if got := settings(f.get("/api/user/settings", f.acc.Token).Expect(t, http.StatusOK, "")); got != want {
			t.Fatalf("after the refused bodies the settings are %+v, want %+v", got, want)
		}
	})
}
