package note_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
)

// nestedJSON returns a JSON object depth levels deep whose innermost container is an
// object ({"a":{"a":…1}}) or, with array, an array ({"a":[[…1]]}).
func nestedJSON(depth int, array bool) string {
	if array {
		return `{"a":` + strings.Repeat("[", depth-1) + "1" + strings.Repeat("]", depth-1) + "}"
	}
	return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
}

// checkDepth checks the properties raw as note.CheckBodyDepth checks them in a body.
func checkDepth(raw string) error { return note.CheckBodyDepth([]byte(`{"properties":` + raw + "}")) }

func TestCheckBodyDepth(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		ok   bool
	}{
		{"a flat object is accepted", `{"a":1,"b":"x"}`, true},
		{"objects at the limit are accepted", nestedJSON(note.MaxPropertiesDepth, false), true},
		{"arrays at the limit are accepted", nestedJSON(note.MaxPropertiesDepth, true), true},
		{"objects one level over the limit are refused", nestedJSON(note.MaxPropertiesDepth+1, false), false},
		{"arrays one level over the limit are refused", nestedJSON(note.MaxPropertiesDepth+1, true), false},
		{"objects 10,000 levels deep are refused", nestedJSON(10_000, false), false},
		{"arrays 10,000 levels deep are refused", nestedJSON(10_000, true), false},
		{"siblings do not add up", `{"a":` + strings.Repeat("[1],", 100) + "[1]}", true},
		{"brackets inside strings do not count", `{"a":"` + strings.Repeat("[{", 100) + `"}`, true},
		{"an escaped quote does not end a string", `{"a":"\"` + strings.Repeat("[", 100) + `"}`, true},
		{"an escaped backslash ends before the quote", `{"a":"\\"` + strings.Repeat(",[", 40) + strings.Repeat("]", 40) + "}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkDepth(tt.raw)
			if tt.ok && err != nil {
				t.Fatalf("CheckBodyDepth = %v, want nil", err)
			}
			if !tt.ok && (!errors.Is(err, note.ErrInvalidProperties) || !strings.Contains(err.Error(), "deeper than 32 levels")) {
				t.Fatalf("CheckBodyDepth = %v, want ErrInvalidProperties naming the limit", err)
			}
		})
	}
}

func TestFrontmatterNestingIsCappedLikeJSON(t *testing.T) {
	for _, tt := range []struct {
		name string
		yaml string
	}{
		{"a deep mapping", nestedFlow(note.MaxPropertiesDepth + 1)},
		{"a deep list", "a: " + strings.Repeat("[", note.MaxPropertiesDepth) + strings.Repeat("]", note.MaxPropertiesDepth)},
		{"a mapping 10,000 levels deep", nestedFlow(10_000)},
		{"a list 10,000 levels deep", "a: " + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := note.SplitFrontmatter("---\n" + tt.yaml + "\n---\nbody"); !errors.Is(err, note.ErrInvalidProperties) {
				t.Fatalf("SplitFrontmatter = %v, want ErrInvalidProperties", err)
			}
		})
	}
	// The same depth that JSON accepts is accepted in YAML.
	if _, _, err := note.SplitFrontmatter("---\na: " + strings.Repeat("[", note.MaxPropertiesDepth-1) + strings.Repeat("]", note.MaxPropertiesDepth-1) + "\n---\n"); err != nil {
		t.Fatalf("a list at the limit: %v", err)
	}
}

// depthOf is the nesting depth of a decoded JSON value, the properties object being 1.
func depthOf(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, depthOf(e))
		}
		return d + 1
	case []any:
		for _, e := range v {
			d = max(d, depthOf(e))
		}
		return d + 1
	default:
		return 0
	}
}

func FuzzCheckBodyDepth(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":[1,{"b":null}]}`, `{"a":"]]]}}}"}`, `{"a":"\\"}`, `{"\"":[[["x"]]]}`,
		nestedJSON(note.MaxPropertiesDepth, false), nestedJSON(note.MaxPropertiesDepth+1, true), `[`, `"`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var v any
		if json.Unmarshal([]byte(raw), &v) != nil {
			return // Decoding refuses it anyway; only valid JSON must be judged right.
		}
		err := checkDepth(raw)
		if want := depthOf(v) <= note.MaxPropertiesDepth; (err == nil) != want {
			t.Fatalf("CheckBodyDepth(%q) = %v, but the value is %d levels deep", raw, err, depthOf(v))
		}
	})
}

func TestDescriptionIsTheSummaryElseTheProperty(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		name    string
		summary *string
		props   map[string]any
		want    string
	}{
		{"the summary", s("Summary"), map[string]any{"description": "Property"}, "Summary"},
		{"the property without a summary", nil, map[string]any{"description": " Property "}, "Property"},
		{"the property beside a blank summary", s("  "), map[string]any{"description": "Property"}, "Property"},
		{"a property that is not text is none", nil, map[string]any{"description": []any{"a"}}, ""},
		{"neither", nil, nil, ""},
	} {
		if got := (note.Text{Summary: c.summary, Properties: c.props}).Description(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
