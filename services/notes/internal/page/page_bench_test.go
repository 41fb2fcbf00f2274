package page_test

import (
	"context"
	"html/template"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/services/notes/internal/page"
)

// typicalNote is about 5 KB of everyday Markdown: headings, prose, lists, a table, code,
// a callout and a footnote.
var typicalNote = func() string {
	section := "## Section\n\nA paragraph of ordinary prose with *emphasis*, **strong text**, `inline code` and a " +
		"[link](https://example.com/docs). It goes on for a while, as notes do, to make the section realistic.\n\n" +
		"- first point\n- second point with more words\n- [x] a finished task\n\n" +
		"| Name | Value |\n|:-----|------:|\n| alpha | 1 |\n| beta | 2 |\n\n" +
		"```go\nfunc add(a, b int) int { return a + b }\n```\n\n> [!tip] Remember\n> Callouts carry advice.\n\n"
	var b strings.Builder
	b.WriteString("# A typical note\n\nIntroduction with a footnote.[^1]\n\n")
	for b.Len() < 5000 {
		b.WriteString(section)
	}
	b.WriteString("[^1]: The footnote.\n")
	return b.String()
}()

// BenchmarkPageShell measures what a page costs once its note is rendered (at publish):
// the template shell around the stored HTML, built once per change of the note or its
// owner's settings.
func BenchmarkPageShell(b *testing.B) {
	body, err := render.Markdown(context.Background(), typicalNote, render.Options{})
	if err != nil {
		b.Fatal(err)
	}
	d := page.Data{Title: "A typical note", Summary: "About five kilobytes of Markdown", Author: "Ada",
		Published: time.Now(), Updated: time.Now(), Body: template.HTML(body.HTML),
		Properties: map[string]any{"tags": []any{"a", "b"}, "status": "draft"},
		Theme:      "system", Accent: "#5b6ee1", Font: "sans", URL: "https://share.example/s/x", ImageURL: "https://share.example/api/og/x.png"}
	b.SetBytes(int64(len(typicalNote)))
	b.ReportAllocs()
	var size int
	for b.Loop() {
		p, err := page.Render(d)
		if err != nil {
			b.Fatal(err)
		}
		size = len(p.HTML)
	}
	b.ReportMetric(float64(size), "html-bytes")
}
