//go:build linux

package render

import (
	"testing"
	"time"
)

// FuzzLinear looks for input that takes a render time more than linear in its length:
// its input is a unit, which it repeats to 1 KiB and to 16 KiB, and it fails when the
// larger note takes over 6 times the CPU time of sixteen of the smaller one (plus 10
// ms). A quadratic render takes up to 16 times as long, a linear one mostly about the
// same. Not always: goldmark matches the line that opens an HTML block with regular
// expressions, and Go's regexp runs a line longer than a few KiB on its slower
// machine, so a note that is one long line of "<textarea>a" takes 3.5 to 4.5 times as
// long per KiB at 16 KiB, in linear time at both sizes. The sizes are small, so that
// each run takes some tens of milliseconds: on the code before bounds, the strongest
// quadratic shapes took 8 to 13 times as long at 16 KiB; TestEachShapeRendersInLinearTime
// measures larger notes for the weaker ones. The seeds are the shapes that were
// quadratic (see shapes), goldmark's constructs and one unit for each extension of ours.
func FuzzLinear(f *testing.F) {
	for _, s := range shapes {
		f.Add(s.unit)
	}
	for _, unit := range []string{
		// goldmark's CommonMark: inline constructs, unclosed and closed.
		"*a", "a*", "**a", "***a", "a**a*", "a*a**", "**a*", "*a**", "_a", "`a``", "`", "<a", "<a b=\"\n", "<http:a", "&#", "\\\\", "a  \n",
		"[a]", "[a][b]", "![", "](", "[a](b)", "[a](b \"c", "[a](b 'c\n",
		// goldmark's CommonMark: blocks.
		"# a\n", "a\n=\n", "- a\n", "- ", "* a\n  ", "> \n", "    a\n", "<div>\n", "<!-- a\n", "---\n",
		// Our extensions, one unit or more each: tables, callouts, highlights, tags,
		// wikilinks, maths, comments, code blocks, footnotes, linkify,
		// strikethrough, task lists, inline footnotes.
		"|a|\n|-|\n", "|", "> [!note] a\n", "> [!tip]- a\n> b\n", "==a", "a==", "#a ", "#a/b", "[[a", "[[a]]",
		"![[a", "$a", "$$", "$$\na\n", "%%a", "%%\na\n", "```\n", "```go\na\n", "~~~\n", "[^a]", "[^a]: b\n",
		"www.a.", "http://a", "~~a", "- [ ] ", "- [x] a\n", "- [?] a\n", "^[a", "^[a]", "^[*a", "*^[a*]", "^[[a]", "^[a](b", "^[[^a]]",
		// Anchors, block ids, note links within and between notes, sizes.
		"# a\n", "a ^b\n", "^b\n\n", "- a ^b\n", "[[#a]]", "[[#a#b|c]]", "[[a\\|b]]", "[a](b.md#c)", "[a](#b)", "![a|3](b)",
		// Raw HTML kept, dropped with its content, unbalanced, styled; players and web embeds.
		"<b>", "</b>", "<p/>", "a<br>", "<div>\n", "</div>\n", "<td>", "<table><p>", "a <script>b", "</script>", "<textarea>a",
		"<span style=\"color:red;", "<i style=\"color:rgb(", "<!--", "<iframe src=\"https://youtu.be/dQw4w9WgXcQ\">",
		"![](https://youtu.be/dQw4w9WgXcQ)", "![a](https://x.com/a)", "<svg><svg>",
	} {
		f.Add(unit)
	}
	f.Fuzz(func(t *testing.T, unit string) {
		if len(unit) == 0 || len(unit) > 256 {
			t.Skip()
		}
		if err := linearity(t, unit, 1<<10, 16<<10, 6, 10*time.Millisecond); err != nil {
			t.Error(err)
		}
	})
}
