package render_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/render"
)

// A note link keeps its target and fragment as written; the page's builder resolves
// them, and what the page shows is what Obsidian shows.
func TestNoteLinksAreKeptAsWritten(t *testing.T) {
	tests := []struct {
		name, src string
		links     []render.Link
		shown     string // as the page shows it when no link resolves
	}{
		{"a target", "[[Note]]", []render.Link{{Target: "Note"}}, "Note"},
		{"shown text", "[[Note|shown]]", []render.Link{{Target: "Note"}}, "shown"},
		{"a heading", "[[Note#Part Two]]", []render.Link{{Target: "Note", Fragment: "Part Two"}}, "Note &gt; Part Two"},
		{"a heading in a section", "[[Note#A#B|shown]]", []render.Link{{Target: "Note", Fragment: "A#B"}}, "shown"},
		{"a heading in a section, shown", "[[Note#A#B]]", []render.Link{{Target: "Note", Fragment: "A#B"}}, "Note &gt; A &gt; B"},
		{"a block", "[[Note#^b-1]]", []render.Link{{Target: "Note", Fragment: "^b-1"}}, "Note &gt; ^b-1"},
		{"an embed", "![[Note]]", []render.Link{{Target: "Note", Embed: true}}, "Note"},
		{"an escaped pipe in a table", "| a |\n|---|\n| [[Note\\|alias]] |\n", []render.Link{{Target: "Note"}}, "alias"},
		{"a Markdown link to a note", "[the *note*](Folder/Note%20name.md)", []render.Link{{Target: "Folder/Note name.md"}}, "the <em>note</em>"},
		{"a Markdown link to a heading", "[text](Note.MD#Part%20Two)", []render.Link{{Target: "Note.MD", Fragment: "Part Two"}}, "text"},
		{"a web page is no note", "[text](https://example.com/Note.md)", nil, `<a href="https://example.com/Note.md"`},
		{"another file is no note", "[text](file.pdf)", nil, `<a href="file.pdf"`},
		{"an image not uploaded is its name", "![[x.png|300]] [[x.png]]", nil, "x.png"},
		{"audio is its name", "![[song.mp3#t=10]]", nil, "song.mp3"},
		{"an empty alias shows the target", "[[Note|]]", []render.Link{{Target: "Note"}}, "Note"},
		{"a note's embed has no size", "![[Note#Part|300]]", []render.Link{{Target: "Note", Fragment: "Part", Embed: true}}, "Note &gt; Part"},
		{"a dot in a note's name", "[[v1.2 notes]]", []render.Link{{Target: "v1.2 notes"}}, "v1.2 notes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := markdown(t, tt.src+"\n")
			if !reflect.DeepEqual(res.Links, tt.links) {
				t.Errorf("links %+v, want %+v", res.Links, tt.links)
			}
			html := render.ResolveLinks(string(res.HTML), res.Nonce, res.Links, make([]string, len(res.Links)))
			if !strings.Contains(html, tt.shown) {
				t.Errorf("HTML lacks %s:\n%s", tt.shown, html)
			}
			if tt.links != nil && !strings.Contains(html, `<span class="wikilink unresolved">`+tt.shown+"</span>") {
				t.Errorf("an unresolved link is not its text %s:\n%s", tt.shown, html)
			}
		})
	}
}

// ResolveLinks takes the whole href from the caller and adds nothing to it.
func TestResolveLinksUsesTheHrefAsGiven(t *testing.T) {
	res := markdown(t, "[[Note#Part Two]] [[Note#Nowhere]]\n")
	html := render.ResolveLinks(string(res.HTML), res.Nonce, res.Links,
		[]string{"https://share.example/s/a#n-part-two", "https://share.example/s/a"})
	for _, want := range []string{
		`<a class="wikilink" href="https://share.example/s/a#n-part-two">Note &gt; Part Two</a>`,
		`<a class="wikilink" href="https://share.example/s/a">Note &gt; Nowhere</a>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %s:\n%s", want, html)
		}
	}
}

// A link within the note resolves in the render: to the anchor, or to its text.
func TestLinksWithinTheNoteResolveInTheRender(t *testing.T) {
	src := "# Überblick\n\n[[#überblick]], [[#^b1|the block]], [[#Missing]], [[#A#Missing]], [x](#Überblick) and [y](#nowhere).\n\nA block ^b1\n"
	res := markdown(t, src)
	if len(res.Links) != 0 {
		t.Errorf("links within the note are not looked up: %+v", res.Links)
	}
	html := string(res.HTML)
	for _, want := range []string{
		`<a class="wikilink" href="#n-%C3%BCberblick" rel="nofollow">überblick</a>`,
		`<a class="wikilink" href="#%5Eb1" rel="nofollow">the block</a>`,
		`<span class="wikilink unresolved">Missing</span>`,
		`<span class="wikilink unresolved">A &gt; Missing</span>`,
		`<a class="wikilink" href="#n-%C3%BCberblick" rel="nofollow">x</a>`,
		`<a href="#nowhere" rel="nofollow">y</a>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %s:\n%s", want, html)
		}
	}
}

func TestImageSizes(t *testing.T) {
	html := string(markdown(t, "![A plot|300](a.png) ![|40x30](b.png) ![a|b](c.png) ![x|0](d.png) ![250](e.png)\n").HTML)
	for _, want := range []string{
		`<img src="a.png" alt="A plot" width="300">`, `<img src="b.png" alt="" width="40" height="30">`, `<img src="e.png" alt="" width="250">`,
		`<img src="c.png" alt="a|b">`, `<img src="d.png" alt="x|0">`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %s:\n%s", want, html)
		}
	}
}

// Brackets that make no link stay text as written: the parser that notes where links end
// gives back what goldmark's link parser read ahead (a reference label, a destination).
func TestBracketsThatMakeNoLinkStayText(t *testing.T) {
	for src, want := range map[string]string{
		"[^1][^1]x":                       "<p>[^1][^1]x</p>",
		"[a][b] c":                        "<p>[a][b] c</p>",
		"[a](b c d) e":                    "<p>[a](b c d) e</p>",
		"[a [b] c](https://x.example/) d": `<p><a href="https://x.example/" rel="nofollow">a [b] c</a> d</p>`,
	} {
		if html := string(markdown(t, src+"\n").HTML); !strings.Contains(html, want) {
			t.Errorf("%q renders as %s, want %s", src, html, want)
		}
	}
}
