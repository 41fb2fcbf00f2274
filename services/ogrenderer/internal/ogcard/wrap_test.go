package ogcard_test

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/sharenote/sharenote/services/ogrenderer/internal/ogcard"
)

// face is Go Regular at 30 px. Faces keep scratch buffers, so each test makes its own.
func face(t testing.TB) font.Face {
	t.Helper()
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 30, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		t.Fatal(err)
	}
	return fc
}

// extremes are texts a title or summary may hold; the card and the layout must survive
// every one of them.
var extremes = map[string]string{
	"10,000 characters":       strings.Repeat("lorem ipsum dolor ", 556)[:10000],
	"one 500-rune word":       strings.Repeat("Supercalifragilistic", 25),
	"CJK paragraph":           strings.Repeat("日本語の文章には空白がありません。中文段落也没有空格，한국어도 띄어쓰기가 있지만 길다。", 8),
	"200 emoji":               strings.Repeat("😀👨‍👩‍👧‍👦🇩🇪🇯🇵👍🏽❤️‍🔥🏳️‍🌈👩🏿‍💻", 25),
	"right to left":           "שלום עולם, זהו טקסט בעברית. مرحبا بالعالم، هذا نص عربي طويل. \u202eevil override\u202c",
	"combining marks":         "Cafe\u0301 na\u0308ive Z̸̡̢̛̗̘̙̜̝̞̟̠̀́̂̃̄̅̆̇̈̉̊̋̌̍̎̏̐̑̒̓̔̕̚ąlgo " + strings.Repeat("a\u0301\u0302\u0303\u0304", 100),
	"control characters":      "bell\a back\b nul\x00 esc\x1b[31mred\x1b[0m del\x7f c1\u0085\u009b",
	"invalid UTF-8":           "valid \xff\xfe half \xe2\x82 end \xc0\xaf over\xf4\x90\x80\x80long",
	"empty":                   "",
	"whitespace only":         " \t\n\r\u00a0\u2028\u3000 ",
	"newlines":                "first line\nsecond line\r\n\r\nthird\tafter a tab\n\n\n",
	"zero-width characters":   strings.Repeat("\u200b\u200c\u200d\ufeff\u2060", 3000),
	"lone marks":              strings.Repeat("\u0301", 5000),
	"flags":                   strings.Repeat("🇺🇳", 100) + "🇺",
	"one wide word then text": "W" + strings.Repeat("W", 200) + " and then some more words that follow it",
	"soft hyphens":            "extra\u00adordinary hyphen\u00adation",
}

func TestWrapKeepsEveryLineWithinTheWidth(t *testing.T) {
	fc := face(t)
	for name, s := range extremes {
		for _, width := range []int{0, 1, 20, 200, ogcard.ColumnWidth} {
			for _, limit := range []int{1, 3} {
				lines := ogcard.Wrap(fc, s, fixed.I(width), limit)
				checkLines(t, fc, name, s, lines, fixed.I(width), limit)
			}
		}
	}
}

func TestWrapBreaksAtSpacesAndEllipsizes(t *testing.T) {
	fc := face(t)
	w := font.MeasureString(fc, "the quick brown")
	cases := []struct {
		name  string
		in    string
		width fixed.Int26_6
		limit int
		want  []string
	}{
		{"fits on one line", "the quick brown", w, 3, []string{"the quick brown"}},
		{"breaks at the last space that fits", "the quick brown fox jumps", w, 3, []string{"the quick brown", "fox jumps"}},
		{"runs of spaces and line breaks are one space", "  the \n\n quick\t\tbrown  ", w, 3, []string{"the quick brown"}},
		{"text past the last line ends in an ellipsis", "the quick brown fox jumps over the lazy dog", w, 1, []string{"the quick…"}},
		{"empty text has no lines", "", w, 3, nil},
		{"blank text has no lines", " \n\t ", w, 3, nil},
		{"a combining accent becomes the precomposed letter", "Cafe\u0301", w, 1, []string{"Café"}},
		{"marks without a glyph are dropped, not boxed", "a\u0335b", w, 1, []string{"ab"}},
		{"control and format characters are removed", "a\x00b\u200dc\u202ed\x1b", w, 1, []string{"abcd"}},
		{"invalid UTF-8 becomes the replacement character", "a\xffb", w, 1, []string{"a\ufffdb"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ogcard.Wrap(fc, c.in, c.width, c.limit)
			if !slices.Equal(got, c.want) {
				t.Errorf("Wrap(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestWrapBreaksWordsWiderThanALine(t *testing.T) {
	fc := face(t)
	word := strings.Repeat("x", 500)
	lines := ogcard.Wrap(fc, word, fixed.I(300), 3)
	if len(lines) != 3 || !strings.HasSuffix(lines[2], ogcard.Ellipsis) {
		t.Fatalf("lines = %q, want 3 with the last cut short", lines)
	}
	for _, l := range lines[:2] {
		if strings.Trim(l, "x") != "" || font.MeasureString(fc, l+"x") <= fixed.I(300) {
			t.Errorf("line %q is not a full line of the word", l)
		}
	}
}

func TestWrapBreaksBetweenCJKCharacters(t *testing.T) {
	fc := face(t)
	const text = "Go言語で書いたメモを公開する"
	lines := ogcard.Wrap(fc, text, fixed.I(200), 3)
	if len(lines) != 2 || strings.Join(lines, "") != text || !strings.HasPrefix(lines[0], "Go言") {
		t.Fatalf("lines = %q, want the text in two lines broken between characters", lines)
	}
}

func TestWrapKeepsFlagsTogether(t *testing.T) {
	fc := face(t)
	flag := "🇩🇪"
	one := font.MeasureString(fc, flag)
	// A line that holds one and a half flags must hold exactly one.
	lines := ogcard.Wrap(fc, strings.Repeat(flag, 4), one+one/2, 4)
	if !slices.Equal(lines, []string{flag, flag, flag, flag}) {
		t.Errorf("lines = %q, want one flag a line", lines)
	}
}

// FuzzWrap checks the layout on any text, width and line limit: no panic, at most the
// line limit, valid UTF-8, and every line within the width unless it is one character
// wider than the width on its own.
func FuzzWrap(f *testing.F) {
	for _, s := range extremes {
		f.Add(s, uint16(ogcard.ColumnWidth), uint8(3))
	}
	f.Add("a b c d e f g", uint16(25), uint8(2))
	f.Add("🇩🇪🇫🇷🇮", uint16(30), uint8(5))
	f.Add("x\u0301\u0301\u0301 y", uint16(0), uint8(1))
	fc := face(f)
	f.Fuzz(func(t *testing.T, s string, width uint16, limit uint8) {
		max := fixed.I(int(width) % 2000)
		n := int(limit) % 6
		lines := ogcard.Wrap(fc, s, max, n)
		checkLines(t, fc, "fuzz", s, lines, max, n)
	})
}

func checkLines(t *testing.T, fc font.Face, name, in string, lines []string, max fixed.Int26_6, limit int) {
	t.Helper()
	if len(lines) > limit {
		t.Fatalf("%s: %d lines, limit %d", name, len(lines), limit)
	}
	for _, l := range lines {
		if !utf8.ValidString(l) {
			t.Fatalf("%s: line %q is not valid UTF-8", name, l)
		}
		if l == "" || l != strings.TrimSpace(l) {
			t.Fatalf("%s: line %q is empty or has spaces around it (input %q)", name, l, in)
		}
		if strings.ContainsFunc(l, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
			t.Fatalf("%s: line %q holds control or format characters", name, l)
		}
		if w := font.MeasureString(fc, l); w > max && !oneCharacter(l) {
			t.Fatalf("%s: line %q measures %v, more than %v (input %q)", name, l, w, max, in)
		}
	}
}

// oneCharacter reports whether s is a single character: one rune with marks after it, or
// a flag (two regional indicators).
func oneCharacter(s string) bool {
	bases := 0
	for _, r := range s {
		if !unicode.Is(unicode.M, r) && (r < 0x1f3fb || r > 0x1f3ff) {
			bases++
		}
	}
	if bases == 2 {
		rs := []rune(s)
		return len(rs) == 2 && rs[0] >= 0x1f1e6 && rs[0] <= 0x1f1ff && rs[1] >= 0x1f1e6 && rs[1] <= 0x1f1ff
	}
	return bases <= 1
}
