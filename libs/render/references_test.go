package render_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/render"
)

// Code, math and comments are data: no reference is found in them.
func TestReferencesInCodeAreData(t *testing.T) {
	src := "`[[a.png]]` and ``![[b.png]]``\n\n```\n[[c.png]] ![x](d.png)\n```\n\n    [[e.png]]\n\n%%[[f.png]]%% $[[g.png]]$\n\n%%\n![[h.png]]\n%%\n\n$$\n[[i.png]]\n$$\n\n[[real.png]]\n"
	refs := render.References(src)
	if len(refs) != 1 || refs[0].Target != "real.png" {
		t.Errorf("references %+v, want only real.png", refs)
	}
}

func TestReferences(t *testing.T) {
	tests := []struct {
		name, src string
		want      render.Reference // Start, End, DestStart and DestEnd as the text they delimit
		whole     string
		dest      string
	}{
		{"a wikilink", "See [[Note]].", render.Reference{Kind: render.RefWikilink, Target: "Note"}, "[[Note]]", ""},
		{"a wikilink with all", "[[ Folder/Note #A#B | shown ]]", render.Reference{Kind: render.RefWikilink, Target: "Folder/Note", Fragment: "A#B", Text: "shown"}, "[[ Folder/Note #A#B | shown ]]", ""},
		{"a wikilink in a table", "| a |\n|---|\n| [[Note\\|alias]] |", render.Reference{Kind: render.RefWikilink, Target: "Note", Text: "alias"}, "[[Note\\|alias]]", ""},
		{"an embed with a size", "![[x.png|300x200]]", render.Reference{Kind: render.RefEmbed, Target: "x.png", Width: 300, Height: 200}, "![[x.png|300x200]]", ""},
		{"an embed with an anchor", "![[x.png#frame|300]]", render.Reference{Kind: render.RefEmbed, Target: "x.png", Fragment: "frame", Width: 300}, "![[x.png#frame|300]]", ""},
		{"a Markdown link to a note", "[the note](Folder/Note%20name.md#Part%20Two)", render.Reference{Kind: render.RefLink, Target: "Folder/Note name.md", Fragment: "Part Two", Text: "the note"}, "[the note](Folder/Note%20name.md#Part%20Two)", "Folder/Note%20name.md#Part%20Two"},
		{"a Markdown image with a size", `![a \] b|300](<my pic.png> "title")`, render.Reference{Kind: render.RefImage, Target: "my pic.png", Text: `a \] b`, Width: 300}, `![a \] b|300](<my pic.png> "title")`, "<my pic.png>"},
		{"a Markdown image sized by its alt text", "![250](x.png)", render.Reference{Kind: render.RefImage, Target: "x.png", Width: 250}, "![250](x.png)", "x.png"},
		{"a Markdown image of a wikilink", "![alt]([[x.png]])", render.Reference{Kind: render.RefImage, Target: "[[x.png]]", Text: "alt"}, "![alt]([[x.png]])", "[[x.png]]"},
		{"a URL", "[a](https://e.com/a%20b#c)", render.Reference{Kind: render.RefLink, Target: "https://e.com/a%20b#c", External: true, Text: "a"}, "[a](https://e.com/a%20b#c)", "https://e.com/a%20b#c"},
		{"in a quote, over lines", "> [a\n> b](\n> x.md)", render.Reference{Kind: render.RefLink, Target: "x.md", Text: "a\n> b"}, "[a\n> b](\n> x.md)", "x.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refs := render.References("Before\n\n" + tt.src + "\n")
			if len(refs) != 1 {
				t.Fatalf("references %+v, want one", refs)
			}
			r, src := refs[0], "Before\n\n"+tt.src+"\n"
			if src[r.Start:r.End] != tt.whole {
				t.Errorf("range %q, want %q", src[r.Start:r.End], tt.whole)
			}
			if dest := ""; r.DestStart >= 0 {
				if dest = src[r.DestStart:r.DestEnd]; dest != tt.dest {
					t.Errorf("destination %q, want %q", dest, tt.dest)
				}
			} else if tt.dest != "" || r.DestEnd != -1 {
				t.Errorf("destination at %d..%d, want %q", r.DestStart, r.DestEnd, tt.dest)
			}
			r.Start, r.End, r.DestStart, r.DestEnd = 0, 0, 0, 0
			if r != tt.want {
				t.Errorf("reference %+v, want %+v", r, tt.want)
			}
		})
	}
}

// References are found in linear time, however many there are, and at most 16384 of them.
func TestReferencesAreBounded(t *testing.T) {
	refs := render.References(strings.Repeat("[[a]] ", 20000))
	if len(refs) != 1<<14 {
		t.Errorf("%d references", len(refs))
	}
}

// A render finds the references References finds, from its own parse: a publish parses
// its note once.
func TestARenderFindsTheReferences(t *testing.T) {
	for _, src := range []string{obsidianFixture, "![[a.png|300]] [[Note#^id]] `[[code]]` [x](Folder/Note.md) ![](b.png)\n", "no references\n"} {
		res := markdown(t, src)
		if want := render.References(src); !reflect.DeepEqual(res.References, want) {
			t.Errorf("the render found %+v, References %+v", res.References, want)
		}
	}
}
