package notes_test

import (
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// housekeepingKeys are the properties by which Obsidian is told how to treat a note: the
// properties table leaves them out (CONTRACT "Rendering").
var housekeepingKeys = []string{"title", "publish", "permalink", "aliases", "alias", "cssclasses", "cssclass", "description"}

// articleClass is the class attribute of the page's <article>, the note's body, and
// whether it has one.
func articleClass(t *testing.T, page string) (string, bool) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(page))
	for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
		if tok := z.Token(); tt == html.StartTagToken && tok.Data == "article" {
			for _, a := range tok.Attr {
				if a.Key == "class" {
					return a.Val, true
				}
			}
			return "", false
		}
	}
	t.Fatal("the page has no <article>")
	return "", false
}

func TestPagePropertiesLeaveOutHousekeeping(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		frontmatter := "---\ntitle: Kept as the heading\npublish: true\npermalink: my-note\naliases: [Other name]\nalias: Old name\n" +
			"cssclasses: [wide-page, cards]\ncssclass: legacy\ndescription: What the note is about.\nstatus: draft\ntags: [a, b]\n---\n"
		id := f.publish(f.acc, note.Draft{Content: frontmatter + "Body.\n", ShowProperties: true})
		_, page := pageOf(t, f, id)
		for _, want := range []string{`<th scope="row">status</th>`, `<th scope="row">tags</th>`,
			`<meta name="description" content="What the note is about.">`,
			`<meta property="og:description" content="What the note is about.">`,
			`<p class="summary">What the note is about.</p>`, `<h1 class="title">Kept as the heading</h1>`} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %s", want)
			}
		}
		for _, key := range housekeepingKeys {
			if strings.Contains(page, `<th scope="row">`+key+`</th>`) {
				t.Errorf("the properties table shows %s", key)
			}
		}
		if class, _ := articleClass(t, page); class != "cssclass-wide-page cssclass-cards cssclass-legacy" {
			t.Errorf("the note's body has the classes %q", class)
		}

		t.Run("a summary is the description over the property", func(t *testing.T) {
			id := f.publish(f.acc, note.Draft{Content: "x", Summary: ptr("The summary."),
				Properties: map[string]any{"description": "The property."}, ShowProperties: true})
			_, page := pageOf(t, f, id)
			if !strings.Contains(page, `<meta name="description" content="The summary.">`) || strings.Contains(page, "The property.") {
				t.Error("the description property showed beside or over the summary")
			}
		})
		t.Run("description and classes apply with the table hidden", func(t *testing.T) {
			id := f.publish(f.acc, note.Draft{Content: "x", ShowProperties: false,
				Properties: map[string]any{"description": "Described.", "cssclasses": "one two", "secret": "hidden value"}})
			_, page := pageOf(t, f, id)
			if !strings.Contains(page, `<meta name="description" content="Described.">`) || strings.Contains(page, "hidden value") ||
				strings.Contains(page, `class="properties"`) {
				t.Error("the hidden table's description is missing, or its properties show")
			}
			if class, _ := articleClass(t, page); class != "cssclass-one cssclass-two" {
				t.Errorf("the note's body has the classes %q", class)
			}
		})
		t.Run("a note without classes has a bare body", func(t *testing.T) {
			_, page := pageOf(t, f, f.publish(f.acc, note.Draft{Content: "x", Properties: map[string]any{"cssclasses": []any{1, "", "!!"}}}))
			if class, ok := articleClass(t, page); ok {
				t.Errorf("the note's body has the classes %q", class)
			}
		})
	})
}

// Hostile cssclasses become classes of the safe pattern, at most 16 of at most 64
// characters, and a hostile description stays text.
func TestHostileCSSClassesStayClasses(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	many := make([]any, 1000)
	for i := range many {
		many[i] = "c" + strings.Repeat("x", i)
	}
	for name, props := range map[string]map[string]any{
		"an attribute breakout": {"cssclasses": []any{`x" onload="alert(1)`, `y' onmouseover='alert(1)`}},
		"a script element":      {"cssclasses": "<script>alert(1)</script>", "cssclass": "</article><script>alert(2)</script>"},
		"a very long name":      {"cssclasses": []any{strings.Repeat("a", 100_000) + `"><script>`}},
		"many names":            {"cssclasses": many},
		"a hostile description": {"description": `"><script>alert(1)</script><meta http-equiv="refresh" content="0;url=javascript:x">`},
	} {
		t.Run(name, func(t *testing.T) {
			id := f.publish(f.acc, note.Draft{Content: "x", Properties: props, ShowProperties: true})
			_, page := pageOf(t, f, id)
			if problems := scriptable(page); len(problems) > 0 {
				t.Errorf("survives into the page: %v", problems)
			}
			class, _ := articleClass(t, page)
			names := strings.Fields(class)
			if len(names) > 16 {
				t.Errorf("%d classes, want at most 16", len(names))
			}
			for _, c := range names {
				if !regexp.MustCompile(`^cssclass-[A-Za-z0-9_-]{1,64}$`).MatchString(c) {
					t.Errorf("class %q is not a safe token", c)
				}
			}
		})
	}
}
