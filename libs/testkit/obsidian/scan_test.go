package obsidian_test

import (
	"slices"
	"testing"

	"github.com/sharenote/sharenote/libs/testkit/obsidian"
)

// What counts as a link, heading or block, line by line, by the rule each case names.
func TestParseNote(t *testing.T) {
	cases := []struct {
		name, src string
		links     []string // Raw of each link
		headings  []string
		blocks    []string
	}{
		{"a tilde fence hides links until its own closing fence",
			"~~~~\n[[A]]\n~~~\n[[B]]\n~~~~\n[[C]]", []string{"[[C]]"}, nil, nil},
		{"a fence inside a callout hides links",
			"> [!note]\n> ```\n> [[A]]\n> ```\n> [[B]]", []string{"[[B]]"}, nil, nil},
		{"a double-backtick span holds a single backtick",
			"``a ` [[A]]`` [[B]]", []string{"[[B]]"}, nil, nil},
		{"an unclosed backtick is literal",
			"` [[A]]", []string{"[[A]]"}, nil, nil},
		{"escaped brackets are no link",
			`\[\[A\]\] [[B]]`, []string{"[[B]]"}, nil, nil},
		{"a comment spans lines; links after it count",
			"%% [[A]]\n[[B]] %% [[C]]", []string{"[[C]]"}, nil, nil},
		{"links in a heading count, the heading keeps its text",
			"## See [[A|a]] #\ntext", []string{"[[A|a]]"}, []string{"See [[A|a]]"}, nil},
		{"a tag is no heading; seven #s are none",
			"#tag\n####### x\n# Real", nil, []string{"Real"}, nil},
		{"frontmatter is not read for links or headings",
			"---\nlink: \"[[A]]\"\n# no\n---\n# Yes", nil, []string{"Yes"}, nil},
		{"a block id needs a space before the caret, or a line of its own",
			"a^x\nb ^y\n\n^z", nil, nil, []string{"y", "z"}},
		{"Markdown links: images, titles, schemes and fragments",
			"![i](a.png \"t\") [w](https://x.org/a.md) [f](#h) [n](B%20c.md)",
			[]string{"![i](a.png \"t\")", "[n](B%20c.md)"}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := obsidian.ParseNote("n.md", []byte(c.src))
			var links, headings []string
			for _, l := range n.Links {
				links = append(links, l.Raw)
			}
			for _, h := range n.Headings {
				headings = append(headings, h.Text)
			}
			if !slices.Equal(links, c.links) || !slices.Equal(headings, c.headings) || !slices.Equal(n.Blocks, c.blocks) {
				t.Errorf("links %q headings %q blocks %q;\nwant %q %q %q", links, headings, n.Blocks, c.links, c.headings, c.blocks)
			}
		})
	}
}

func TestHeadingKey(t *testing.T) {
	for _, c := range [][2]string{
		{"Step 1: Chop & stir", "step 1 chop & stir"},
		{"  FAQ / notes ", "faq notes"},
		{"`hasTag()`", "hastag"},
		{"Привет, МИР", "привет мир"},
		{"What's new? (v2.0)!", "what's new v2 0"},
	} {
		if got := obsidian.HeadingKey(c[0]); got != c[1] {
			t.Errorf("HeadingKey(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

// The scanner never panics and keeps every link's raw text inside the note.
func FuzzParseNote(f *testing.F) {
	for _, s := range []string{"[[a|b]] ![[c#d]]", "```\n[[x]]", "[a](<b c.md>)", "%%[[", "![](", "\\", "# ##"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, l := range obsidian.ParseNote("n.md", []byte(src)).Links {
			if l.Raw == "" || l.Line < 1 {
				t.Fatalf("link %+v", l)
			}
		}
	})
}
