package render_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/render"
)

// Heading anchors are Obsidian's: the letters and digits of every script, lower-cased,
// white space as "-", repeats numbered in document order; every id has the note's prefix.
func TestHeadingAnchorsKeepEveryScript(t *testing.T) {
	src := "# 日本語の見出し\n\n## Überblick: Teil 2\n\n## Привет, мир!\n\n## हिन्दी शीर्षक\n\n### A  *b*  — c_d\n\n## 🎉\n"
	html := string(markdown(t, src).HTML)
	for _, want := range []string{
		`<h1 id="n-日本語の見出し">`, `<h2 id="n-überblick-teil-2">`, `<h2 id="n-привет-мир">`,
		`<h2 id="n-हिन्दी-शीर्षक">`, `<h3 id="n-a-b-c_d">`, `<h2 id="n-heading">`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %s:\n%s", want, html)
		}
	}
}

func TestRepeatedHeadingsAreNumberedInDocumentOrder(t *testing.T) {
	res := markdown(t, "# A\n\n# a\n\n# A 1\n\n# A\n")
	var got []string
	for _, h := range res.Outline.Headings {
		got = append(got, h.Anchor)
	}
	if want := []string{"n-a", "n-a-1", "n-a-1-1", "n-a-2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("anchors %v, want %v", got, want)
	}
}

func TestOutlineAnchorFindsHeadingsAndBlocks(t *testing.T) {
	src := "# Intro\n\n## Setup\n\n### Details\n\n# Usage\n\n## Details\n\nText ^para-1\n\n## Q: why? [x]\n"
	o := markdown(t, src).Outline
	want := []render.Heading{{1, "Intro", "n-intro", "intro", nil}, {2, "Setup", "n-setup", "setup", nil}, {3, "Details", "n-details", "details", nil},
		{1, "Usage", "n-usage", "usage", nil}, {2, "Details", "n-details-1", "details", nil}, {2, "Q: why? [x]", "n-q-why-x", "q why x", nil}}
	for i := range o.Headings {
		o.Headings[i].Section = nil // TestEmbedsCutSectionsAndBlocks covers them
	}
	if !reflect.DeepEqual(o.Headings, want) || !reflect.DeepEqual(o.Blocks, []string{"para-1"}) {
		t.Fatalf("outline %+v", o)
	}
	for fragment, want := range map[string]string{
		"Details":             "n-details",
		"  usage ":            "n-usage",
		"Usage#Details":       "n-details-1",
		"Intro#Details":       "n-details",
		"Intro#Setup#DETAILS": "n-details",
		"q WHY? x":            "n-q-why-x",
		"^para-1":             "^para-1",
		"Setup#Usage":         "",
		"Missing":             "",
		"Q why x":             "n-q-why-x",
		"SETUP#DETAİLS":       "",
		"ſetup":               "n-setup",
		"^PARA-1":             "",
		"^missing":            "",
	} {
		got, ok := o.Anchor(fragment)
		if got != want || ok != (want != "") {
			t.Errorf("Anchor(%q) = %q, %v; want %q", fragment, got, ok, want)
		}
	}
}

// A block id marker at the end of a block's last line, or on a line of its own after it,
// gives the block an id and is not shown.
func TestBlockIDs(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"a paragraph, at its end", "Some text ^p1\n", `<p id="^p1">Some text</p>`},
		{"a paragraph, on the next line", "Some text\n^p2\n", `<p id="^p2">Some text</p>`},
		{"a paragraph, after a blank line", "Some text\n\n^p3\n", `<p id="^p3">Some text</p>`},
		{"a list item", "- one ^li1\n- two\n", `<li id="^li1">one</li>`},
		{"a list", "- one\n- two\n\n^list\n", `<ul id="^list">`},
		{"a quote", "> quoted\n> ^q1\n", `<blockquote id="^q1"><p>quoted</p>`},
		{"a callout", "> [!note] Title\n> body\n\n^c1\n", `<div class="callout callout-note" id="^c1">`},
		{"a callout, at its end", "> [!tip]- Title\n> body ^c2\n", `<details class="callout callout-tip" id="^c2">`},
		{"a table", "| a | b |\n|---|---|\n| c | d |\n^t1\n", "<table id=\"^t1\">"},
		{"a table, after a blank line", "| a |\n|---|\n| c |\n\n^t2\n", "<table id=\"^t2\">"},
		{"a heading keeps its anchor, the marker after it is text", "# H\n^x\n", "<p>^x</p>"},
		{"a caret inside a word is text", "2^10 and a^b\n", "<p>2^10 and a^b</p>"},
		{"right after an embed", "![[x.png]]^img\n", `<p id="^img">`},
		{"an id repeated names the first block only", "a ^d\n\nb ^d\n", "<p id=\"^d\">a</p>\n<p>b</p>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			html := string(markdown(t, tt.src).HTML)
			if !strings.Contains(html, tt.want) {
				t.Errorf("HTML lacks %s:\n%s", tt.want, html)
			}
			if strings.Contains(tt.want, "id=") && strings.Count(html, "^") != 1 {
				t.Errorf("the marker is shown:\n%s", html)
			}
		})
	}
}
