package yamljson_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sharenote/sharenote/libs/yamljson"
)

func convert(t *testing.T, src string, maxDepth int) (any, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return yamljson.Value(doc.Content[0], maxDepth)
}

func TestValueIsWhatJSONHolds(t *testing.T) {
	got, err := convert(t, "a: 1\nb: [true, null, 1.5, 0x1f, 2024-01-02]\nc: {d: text}\n", 3)
	want := map[string]any{"a": int64(1), "b": []any{true, nil, 1.5, int64(31), "2024-01-02"}, "c": map[string]any{"d": "text"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Value = %#v, %v; want %#v", got, err, want)
	}
}

func TestValueRefusesWithTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		reason    string
	}{
		{"an alias", "a: &x 1\nb: *x\n", 2, "aliases"},
		{"a duplicate key", "a: 1\na: 2\n", 2, `the key "a" appears more than once`},
		{"a merge key", "a: {b: 1}\n<<: {c: 2}\n", 2, "merge keys"},
		{"a list as a key", "? [a]\n: 1\n", 1, "a key must be text, not a list"},
		{"infinity", "a: .inf\n", 1, "NaN and infinite"},
		{"nesting past the bound", "a:\n  b:\n    c: 1\n", 3, "values nest deeper than 2 levels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := convert(t, tc.src, 2)
			var e *yamljson.Error
			if !errors.As(err, &e) || e.Line != tc.line || !strings.Contains(e.Reason, tc.reason) {
				t.Errorf("Value = %v; want line %d: …%s…", err, tc.line, tc.reason)
			}
		})
	}
}
