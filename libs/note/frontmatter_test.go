package note_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/sharenote/sharenote/libs/note"
)

func TestSplitFrontmatter(t *testing.T) {
	tests := []struct {
		name      string
		content   string
		wantProps map[string]any
		wantBody  string
	}{
		{
			name:      "leading block becomes properties and is removed with its closing newline",
			content:   "---\ntitle: Hello\ntags: [a, b]\n---\n# Body\n",
			wantProps: map[string]any{"title": "Hello", "tags": []any{"a", "b"}},
			wantBody:  "# Body\n",
		},
		{
			name:      "only the closing line's newline is removed",
			content:   "---\na: 1\n---\n\nbody",
			wantProps: map[string]any{"a": int64(1)},
			wantBody:  "\nbody",
		},
		{
			name:      "CRLF delimiters are accepted and removed",
			content:   "---\r\ntitle: Hi\r\n---\r\nbody\r\n",
			wantProps: map[string]any{"title": "Hi"},
			wantBody:  "body\r\n",
		},
		{
			name:      "a byte order mark before the opening line is allowed and removed",
			content:   "\ufeff---\na: x\n---\nbody",
			wantProps: map[string]any{"a": "x"},
			wantBody:  "body",
		},
		{
			name:      "three dots close the block",
			content:   "---\na: x\n...\nbody",
			wantProps: map[string]any{"a": "x"},
			wantBody:  "body",
		},
		{
			name:      "closing line at the end of the content without newline",
			content:   "---\na: x\n---",
			wantProps: map[string]any{"a": "x"},
			wantBody:  "",
		},
		{
			name:     "no closing delimiter means no frontmatter",
			content:  "---\ntitle: Hello\nno end here\n",
			wantBody: "---\ntitle: Hello\nno end here\n",
		},
		{
			name:     "a lone opening line means no frontmatter",
			content:  "---",
			wantBody: "---",
		},
		{
			name:     "a rule later in the document is not frontmatter",
			content:  "# Title\n\n---\na: 1\n---\n",
			wantBody: "# Title\n\n---\na: 1\n---\n",
		},
		{
			name:     "a first line with trailing spaces is not an opening delimiter",
			content:  "--- \na: 1\n---\nbody",
			wantBody: "--- \na: 1\n---\nbody",
		},
		{
			name:     "an indented closing line does not close the block",
			content:  "---\na: 1\n ---\nbody",
			wantBody: "---\na: 1\n ---\nbody",
		},
		{
			name:     "a byte order mark is kept when there is no frontmatter",
			content:  "\ufeffhello",
			wantBody: "\ufeffhello",
		},
		{
			name:     "an empty block gives nil properties and the stripped body",
			content:  "---\n---\nbody",
			wantBody: "body",
		},
		{
			name:     "a block of only comments gives nil properties",
			content:  "---\n# nothing yet\n---\nbody",
			wantBody: "body",
		},
		{
			name:     "a null document gives nil properties",
			content:  "---\n~\n---\nbody",
			wantBody: "body",
		},
		{
			name: "nested lists and maps are converted to JSON values",
			content: "---\nauthor:\n  name: Ada\n  links:\n    - {site: blog, url: 'https://x'}\n    - [1, 2.5, true, null]\n" +
				"---\n",
			wantProps: map[string]any{"author": map[string]any{
				"name": "Ada",
				"links": []any{
					map[string]any{"site": "blog", "url": "https://x"},
					[]any{int64(1), 2.5, true, nil},
				},
			}},
		},
		{
			name:      "timestamps keep the text written in the source",
			content:   "---\ndate: 2024-01-02\nat: 2001-12-14t21:59:43.10-05:00\nquoted: \"2024-01-02\"\n---\n",
			wantProps: map[string]any{"date": "2024-01-02", "at": "2001-12-14t21:59:43.10-05:00", "quoted": "2024-01-02"},
		},
		{
			name:    "integers are int64 and other numbers float64",
			content: "---\ni: 42\nneg: -7\nhex: 0x1f\nunder: 1_000\nf: 1.5\nexp: 1e3\nhuge: 123456789012345678901234567890\nmaxu: 18446744073709551615\n---\n",
			wantProps: map[string]any{
				"i": int64(42), "neg": int64(-7), "hex": int64(31), "under": int64(1000), "f": 1.5, "exp": 1000.0,
				"huge": 123456789012345678901234567890.0, "maxu": 18446744073709551615.0,
			},
		},
		{
			name:      "non-string scalar keys become their text",
			content:   "---\n1: one\ntrue: yes\n2024-01-02: day\n---\n",
			wantProps: map[string]any{"1": "one", "true": "yes", "2024-01-02": "day"},
		},
		{
			name:      "binary and application tags keep their text",
			content:   "---\nb: !!binary aGVsbG8=\nc: !thing value\ns: !!str 12\n---\n",
			wantProps: map[string]any{"b": "aGVsbG8=", "c": "value", "s": "12"},
		},
		{
			name:      "anchors without aliases are harmless",
			content:   "---\na: &x 1\n---\n",
			wantProps: map[string]any{"a": int64(1)},
		},
		{
			name:      "nesting up to the depth limit is accepted",
			content:   "---\n" + nestedFlow(32) + "\n---\n",
			wantProps: nestedProps(32),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, body, err := note.SplitFrontmatter(tt.content)
			if err != nil {
				t.Fatalf("SplitFrontmatter() error = %v", err)
			}
			if !reflect.DeepEqual(props, tt.wantProps) {
				t.Errorf("props = %#v, want %#v", props, tt.wantProps)
			}
			if body != tt.wantBody {
				t.Errorf("body = %q, want %q", body, tt.wantBody)
			}
		})
	}
}

func TestSplitFrontmatterRejects(t *testing.T) {
	tests := []struct {
		name       string
		content    string
		wantReason string
	}{
		{"a list is not a mapping", "---\n- a\n- b\n---\nbody", "line 2: the frontmatter must be a mapping"},
		{"a single value is not a mapping", "---\njust text\n---\nbody", "not a single value"},
		{"a Markdown heading and text is not a mapping", "---\n# Title\n\ntext\n---\n", "not a single value"},
		{"invalid YAML is reported with the note's line number", "---\na: 1\nb: [\n---\n", "frontmatter line 3"},
		{"a tab-indented mapping is invalid YAML", "---\na:\n\tb: 1\n---\n", "frontmatter line"},
		{"aliases are rejected", "---\na: &x [1, 2]\nb: *x\n---\n", "line 3: aliases"},
		{"billion laughs is rejected without expansion", billionLaughs, "aliases"},
		{"merge keys are rejected", "---\nbase: {a: 1}\n<<: {b: 2}\n---\n", "merge keys"},
		{"nesting deeper than the limit is rejected", "---\n" + nestedFlow(33) + "\n---\n", "deeper than 32"},
		{"deeply nested lists are rejected", "---\na: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n---\n", "deeper than 32"},
		{"duplicate keys are rejected", "---\na: 1\na: 2\n---\n", `line 3: the key "a" appears more than once`},
		{"keys equal as text are duplicates", "---\n1: a\n\"1\": b\n---\n", "appears more than once"},
		{"a list as a key is rejected", "---\n? [a, b]\n: 1\n---\n", "a key must be text, not a list"},
		{"a mapping as a key is rejected", "---\n? {a: 1}\n: 1\n---\n", "a key must be text, not a mapping"},
		{"NaN is rejected", "---\na: .nan\n---\n", "NaN and infinite"},
		{"infinity is rejected", "---\na: [-.inf]\n---\n", "NaN and infinite"},
		{"a wrong explicit tag is rejected", "---\na: !!int twelve\n---\n", "not a valid int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, _, err := note.SplitFrontmatter(tt.content)
			if !errors.Is(err, note.ErrInvalidProperties) {
				t.Fatalf("SplitFrontmatter() error = %v, want ErrInvalidProperties", err)
			}
			if props != nil {
				t.Errorf("props = %#v, want nil on error", props)
			}
			if !strings.Contains(err.Error(), tt.wantReason) {
				t.Errorf("error %q does not contain %q", err, tt.wantReason)
			}
		})
	}
}

// The body of a large note must be a view of the request's content, not a copy of it.
func TestSplitFrontmatterBodySharesContent(t *testing.T) {
	fm := "---\ntitle: big\n---\n"
	content := fm + strings.Repeat("lorem ipsum\n", 150_000)
	props, body, err := note.SplitFrontmatter(content)
	if err != nil || props["title"] != "big" {
		t.Fatalf("SplitFrontmatter() = %v, %v", props, err)
	}
	if unsafe.StringData(body) != unsafe.StringData(content[len(fm):]) {
		t.Error("body does not share the content's memory")
	}
}

// An error message can quote the client's text; it must stay short.
func TestSplitFrontmatterBoundsErrorLength(t *testing.T) {
	key := strings.Repeat("k", 100_000)
	_, _, err := note.SplitFrontmatter("---\n" + key + ": 1\n" + key + ": 2\n---\n")
	if !errors.Is(err, note.ErrInvalidProperties) {
		t.Fatalf("error = %v, want ErrInvalidProperties", err)
	}
	if len(err.Error()) > 300 {
		t.Errorf("error is %d bytes long", len(err.Error()))
	}
}

// SplitFrontmatter on the largest frontmatter it accepts.
func BenchmarkSplitFrontmatterLarge(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("---\n")
	for i := 0; sb.Len() < note.MaxFrontmatterBytes-200; i++ {
		n := strconv.Itoa(i)
		sb.WriteString("list" + n + ": [one, two, {three: 3}]\n")
		sb.WriteString("text" + n + ": \"value with spaces\" # comment\n")
		sb.WriteString("map" + n + ":\n  date: 2024-01-02\n  n: 1.5\n")
	}
	sb.WriteString("---\nbody\n")
	content := sb.String()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, _, err := note.SplitFrontmatter(content); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzSplitFrontmatter(f *testing.F) {
	for _, seed := range []string{
		"",
		"---\n---\n",
		"---\ntitle: Hello\ntags: [a, b]\n---\n# Body\n",
		"\ufeff---\r\na: 1\r\n...\r\nbody",
		"---\na: &x [1]\nb: *x\n---\n",
		"---\ndate: 2024-01-02\nn: 0x1f\nf: .nan\n---\n",
		"---\n? [a]\n: b\n---\n",
		"---\n- 1\n---\n",
		"---\na: {b: {c: [1, 2, {d: e}]}}\n---\nbody",
		"---\nno closing\n",
		billionLaughs,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		props, body, err := note.SplitFrontmatter(content)
		if err != nil {
			if !errors.Is(err, note.ErrInvalidProperties) {
				t.Fatalf("error %v does not wrap ErrInvalidProperties", err)
			}
			return
		}
		if !strings.HasSuffix(content, body) {
			t.Fatalf("body %q is not a suffix of content %q", body, content)
		}
		if !strings.HasPrefix(strings.TrimPrefix(content, "\ufeff"), "---") && (body != content || props != nil) {
			t.Fatalf("content without an opening line changed: props %v, body %q", props, body)
		}
		if props == nil {
			return
		}
		if _, err := json.Marshal(props); err != nil {
			t.Fatalf("props %#v are not JSON-marshalable: %v", props, err)
		}
		if err := checkJSONValue(props, 0); err != nil {
			t.Fatalf("props %#v: %v", props, err)
		}
	})
}

// checkJSONValue verifies that v is made only of the types SplitFrontmatter promises.
func checkJSONValue(v any, depth int) error {
	if depth > 33 {
		return errors.New("nested deeper than the limit")
	}
	switch v := v.(type) {
	case nil, string, bool, int64, float64:
		return nil
	case map[string]any:
		for _, e := range v {
			if err := checkJSONValue(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case []any:
		for _, e := range v {
			if err := checkJSONValue(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	default:
		return errors.New("unexpected type " + reflect.TypeOf(v).String())
	}
}

const billionLaughs = `---
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---
`

// nestedFlow returns a flow mapping nested depth levels deep: {a: {a: ... {a: 1}}}.
func nestedFlow(depth int) string {
	return "a: " + strings.Repeat("{a: ", depth-1) + "1" + strings.Repeat("}", depth-1)
}

func nestedProps(depth int) map[string]any {
	var v any = int64(1)
	for range depth - 1 {
		v = map[string]any{"a": v}
	}
	return map[string]any{"a": v}
}

func TestFrontmatterOverTheBoundIsRejectedWithoutParsing(t *testing.T) {
	big := "---\nk: " + strings.Repeat("a", note.MaxFrontmatterBytes) + "\n---\nbody"
	if _, _, err := note.SplitFrontmatter(big); !errors.Is(err, note.ErrInvalidProperties) {
		t.Fatalf("err = %v, want ErrInvalidProperties", err)
	}
	ok := "---\nk: " + strings.Repeat("a", note.MaxFrontmatterBytes-10) + "\n---\nbody"
	if props, body, err := note.SplitFrontmatter(ok); err != nil || body != "body" || props["k"] == nil {
		t.Fatalf("a frontmatter just under the bound: %v %q", err, body)
	}
}
