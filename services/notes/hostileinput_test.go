package notes_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestListQueryStringIsParsedPerContract(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		for range 3 {
			f.publish(f.acc, note.Draft{Content: "x"})
		}
		for _, tt := range []struct {
			name, query, code string
		}{
			{"a cursor that is not percent-encoding", "?cursor=%%%garbage", "invalid_cursor"},
			{"a cursor with a bad escape beside a good limit", "?limit=1&cursor=ab%zz", "invalid_cursor"},
			{"a limit that is not percent-encoding", "?limit=%2", "invalid_limit"},
			{"a limit given twice", "?limit=1&limit=2", "invalid_limit"},
			{"a cursor given twice", "?cursor=&cursor=", "invalid_cursor"},
			{"an unknown parameter that is not percent-encoding", "?utm_source=%zz", "invalid_field"},
			{"a name that is not percent-encoding", "?%%=1", "invalid_field"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				f.get("/api/user/notes"+tt.query, f.acc.Token).Expect(t, http.StatusBadRequest, tt.code)
			})
		}
		t.Run("unknown parameters are ignored", func(t *testing.T) {
			p := f.list(f.acc.Token, "?utm_source=newsletter&utm_medium=email&fbclid=IwAR0x&limit=2&ref=a%20b")
			if len(p.Notes) != 2 || p.NextCursor == nil {
				t.Errorf("page = %d notes, cursor %v; want the 2 newest and a cursor", len(p.Notes), p.NextCursor)
			}
		})
	})
}

func TestPublicReadsIgnoreTheirQueryString(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(f.acc, note.Draft{Content: "# Hello"})
		for _, query := range []string{"?%%%garbage", "?utm_source=x&fbclid=y", "?cursor=%zz&limit=-1", "?a=1;b=2"} {
			f.get("/api/notes/"+id+query, "").Expect(t, http.StatusOK, "")
			if resp := f.get("/s/"+id+query, ""); resp.Status != http.StatusOK || !strings.Contains(string(resp.Body), "Hello") {
				t.Errorf("GET /s/%s%s = %d", id, query, resp.Status)
			}
		}
	})
}

// nestedProperties returns a properties object depth levels deep: nested objects, or an
// object holding nested arrays.
func nestedProperties(depth int, array bool) string {
	if array {
		return `{"a":` + strings.Repeat("[", depth-1) + "1" + strings.Repeat("]", depth-1) + "}"
	}
	return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
}

// maxDepth is the documented nesting limit of properties (note.MaxPropertiesDepth).
const maxDepth = 32

func TestPropertiesNestingIsCapped(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(f.acc, note.Draft{Content: "x"})
		patch := func(t *testing.T, body string) *testkit.Response {
			return f.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: f.acc.Token,
				Body: []byte(body), ContentType: "application/json"})
		}
		for _, tt := range []struct {
			name string
			body string
		}{
			{"JSON objects one level over the limit", `{"properties":` + nestedProperties(maxDepth+1, false) + "}"},
			{"JSON arrays one level over the limit", `{"properties":` + nestedProperties(maxDepth+1, true) + "}"},
			{"JSON objects 9,000 levels deep", `{"properties":` + nestedProperties(9_000, false) + "}"},
			{"JSON arrays 9,000 levels deep", `{"properties":` + nestedProperties(9_000, true) + "}"},
			{"a frontmatter mapping over the limit", contentWithFrontmatter("a: " + strings.Repeat("{a: ", maxDepth) + "1" + strings.Repeat("}", maxDepth))},
			{"a frontmatter list 9,000 levels deep", contentWithFrontmatter("a: " + strings.Repeat("[", 9_000) + strings.Repeat("]", 9_000))},
		} {
			t.Run(tt.name, func(t *testing.T) {
				resp := patch(t, tt.body).Expect(t, http.StatusBadRequest, "invalid_properties")
				if !strings.Contains(string(resp.Body), "32 levels") {
					t.Errorf("the message does not name the limit: %s", resp.Body)
				}
			})
		}
		t.Run("nesting at the limit is accepted", func(t *testing.T) {
			patch(t, `{"properties":`+nestedProperties(maxDepth, false)+"}").Expect(t, http.StatusOK, "")
			patch(t, `{"properties":`+nestedProperties(maxDepth, true)+"}").Expect(t, http.StatusOK, "")
		})
	})
}

func contentWithFrontmatter(yaml string) string {
	b, _ := json.Marshal(map[string]string{"content": "---\n" + yaml + "\n---\nbody"})
	return string(b)
}

// TestConcurrentSettingsPatchesLoseNoField sends, round after round, one PATCH per
// settings field at the same time, each changing only its field. Every round must end
// with every field at the value its PATCH set: a change that read the settings before
// another one saved them, and then saved all fields, would put a field back.
func TestConcurrentSettingsPatchesLoseNoField(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		// Six fields × eight rounds stays below the 60 mutations a minute of one account.
		for round := range 8 {
			want := map[string]any{
				"name":         fmt.Sprintf("Name %d", round),
				"show_author":  round%2 == 1,
				"theme":        []string{"light", "dark", "system"}[round%3],
				"accent_color": fmt.Sprintf("#0000%02x", round),
				"font":         []string{"serif", "mono", "sans"}[round%3],
				"indexable":    round%2 == 0,
			}
			var wg sync.WaitGroup
			for field, value := range want {
				wg.Go(func() {
					f.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: f.acc.Token,
						JSON: map[string]any{field: value}}).Expect(t, http.StatusOK, "")
				})
			}
			wg.Wait()
			var got struct{ Settings map[string]any }
			f.get("/api/user/settings", f.acc.Token).Expect(t, http.StatusOK, "").Decode(t, &got)
			for field, value := range want {
				if got.Settings[field] != value {
					t.Fatalf("round %d: %s = %v, want %v: a concurrent PATCH of another field undid it (settings %v)",
						round, field, got.Settings[field], value, got.Settings)
				}
			}
		}
	})
}
