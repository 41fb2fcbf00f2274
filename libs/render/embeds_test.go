package render_test

import (
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/render"
)

// TestEmbedsCutSectionsAndBlocks: the spans of the outline are where the sections and
// blocks are in the final HTML; a section ends before the next heading of the same or a
// higher level, or the footnotes; a heading inside another block has none.
func TestEmbedsCutSectionsAndBlocks(t *testing.T) {
	res := markdown(t, "# A\n\nIntro $x$ ^intro\n\n## B\n\n- item ^li\n- other\n\n### C\n\nc words[^1]\n\n## D\n\n> - ## Nested\n\n"+
		"d words\n\n[^1]: note\n")
	html := string(res.HTML)
	for fragment, want := range map[string]string{
		"B":      `<h2 id="n-b">B</h2>` + "\n<ul>\n" + `<li id="^li">item</li>` + "\n<li>other</li>\n</ul>\n" + `<h3 id="n-c">C</h3>`,
		"C":      `<h3 id="n-c">C</h3>` + "\n<p>c words",
		"^li":    `<ul><li id="^li">item</li>`,
		"^intro": `<p id="^intro">Intro <math`,
	} {
		cut, ok := render.Cut(html, res.Outline, fragment)
		if !ok || !strings.HasPrefix(cut, want) {
			t.Errorf("Cut(%q) = %q, %v; want it to start with %q", fragment, cut, ok, want)
		}
		if strings.Contains(cut, "footnotes") || strings.Contains(cut, "d words") && fragment != "D" {
			t.Errorf("Cut(%q) = %q runs past its section", fragment, cut)
		}
	}
	if cut, _ := render.Cut(html, res.Outline, "D"); !strings.HasSuffix(cut, "<p>d words</p>\n") {
		t.Errorf("the last section %q should end before the footnotes", cut)
	}
	if cut, ok := render.Cut(html, res.Outline, "Nested"); ok {
		t.Errorf("a heading inside a quote was cut: %q", cut)
	}
	if whole, ok := render.Cut(html, res.Outline, ""); !ok || whole != html {
		t.Errorf("no fragment should cut the whole note")
	}
	if strings.ContainsRune(html, '\ue004') || strings.ContainsRune(html, '\ue005') {
		t.Errorf("span markers left in the HTML: %q", html)
	}
}

// TestANoteCannotForgeSpans: what a note writes that looks like a span marker stays its
// text and moves no span.
func TestANoteCannotForgeSpans(t *testing.T) {
	res := markdown(t, "# A\n\n\ue0040\ue001 \ue0050\ue001 text\n\n# B\n")
	html := string(res.HTML)
	if !strings.Contains(html, "\ue0040\ue001 \ue0050\ue001 text") {
		t.Errorf("the note's text was changed: %q", html)
	}
	if cut, _ := render.Cut(html, res.Outline, "A"); !strings.HasPrefix(cut, `<h1 id="n-a">A</h1>`) || strings.Contains(cut, "n-b") {
		t.Errorf("Cut(A) = %q", cut)
	}
}

// TestEmbedsPastThePageCapAreLinks: an embed that would take the page past MaxPage shows
// as a link, and each embed's ids get a prefix of their own.
func TestEmbedsPastThePageCapAreLinks(t *testing.T) {
	res := markdown(t, "![[Big]]\n\n![[Big]]\n\n![[Big]]\n")
	big := render.Frame(`<p id="^x">`+strings.Repeat("w", render.MaxPage/2-100)+"</p>", "Big", "https://share.example/s/big")
	html := render.Resolve(string(res.HTML), res.Nonce, res.Links, []string{"https://share.example/s/big"},
		func(int) string { return big })
	if len(html) > render.MaxPage {
		t.Errorf("the page is %d bytes, over MaxPage", len(html))
	}
	if strings.Count(html, `<div class="embed">`) != 1 || !strings.Contains(html, `<a class="wikilink" href="https://share.example/s/big">Big</a>`) ||
		!strings.Contains(html, `id="e1-^x"`) {
		t.Errorf("want one embed (e1-) and the others as links; got %d embeds", strings.Count(html, `<div class="embed">`))
	}
}
