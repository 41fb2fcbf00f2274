package ogcard

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
	"golang.org/x/text/unicode/norm"
)

// Ellipsis ends a line that had to be cut short.
const Ellipsis = "…"

const (
	// maxInputBytes bounds the text that is looked at: three lines of the widest card hold
	// a few hundred characters, while a title may be megabytes long.
	maxInputBytes = 16 << 10
	// maxRunes bounds the runes laid out, so that text of zero-width runes (which never
	// fills a line) cannot make the drawing slow. Text past it counts as cut short.
	maxRunes = 2048
)

// Wrap breaks s into at most maxLines lines of face that each measure at most maxWidth
// with font.MeasureString. Lines break at spaces; between CJK characters, which are
// written without spaces; and inside a word that is wider than a whole line, between
// characters. When the text does not fit, the last line ends with an ellipsis.
//
// The only line that can measure more than maxWidth is one holding a single character
// (a rune with its combining marks, or a flag's two regional indicators) that is wider
// than maxWidth on its own. The text is cleaned first (see Clean); marks the face has no
// glyph for are dropped rather than drawn as boxes between letters. Empty or blank text
// gives no lines.
func Wrap(face font.Face, s string, maxWidth fixed.Int26_6, maxLines int) []string {
	if maxLines <= 0 {
		return nil
	}
	w := wrapper{face: face, max: maxWidth, maxLines: maxLines, last: -1}
	w.run(Clean(s))
	return w.lines
}

// Clean makes untrusted text drawable: invalid UTF-8 becomes U+FFFD; the text is put in
// NFC, so that a letter and its combining accent become the one precomposed glyph the
// fonts have; line breaks, tabs and other spaces become plain spaces; control and format
// characters (ZWJ, bidi overrides, soft hyphens, variation selectors) are removed, since
// they have no glyph of their own.
func Clean(s string) string {
	if len(s) > maxInputBytes {
		cut := maxInputBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	s = norm.NFC.String(strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Variation_Selector, r):
			return -1
		}
		return r
	}, s)
}

// wrapper lays out text line by line. Widths are summed exactly as font.MeasureString
// sums them (advances plus the kerning between neighbours), so a line is measured once,
// character by character, as it grows.
type wrapper struct {
	face     font.Face
	max      fixed.Int26_6
	maxLines int

	lines []string // Finished lines; the current one is not among them.
	line  strings.Builder
	width fixed.Int26_6
	last  rune // The current line's last rune; -1 while it is empty.
	// spaced is a space seen since the current line's last character: the next word goes
	// after a space, if it goes on this line at all.
	spaced bool
	cut    bool // Text was left out: the last line ends with the ellipsis.
	runes  int
}

// run lays out s word by word, a word being a run of characters between spaces; a CJK
// character is a word of its own, since a line may break on either side of it.
func (w *wrapper) run(s string) {
	var word []string // The current word's characters.
	for s != "" && !w.cut {
		var c string
		c, s = w.cluster(s)
		if c == "" {
			continue
		}
		if w.runes += utf8.RuneCountInString(c); w.runes > maxRunes {
			w.cut = true
			break
		}
		switch {
		case c == " ":
			w.word(word)
			word = word[:0]
			w.spaced = true
		case breaksAround(c):
			w.word(word)
			w.word([]string{c})
			word = word[:0]
		default:
			word = append(word, c)
		}
	}
	w.word(word)
	if w.line.Len() > 0 {
		w.lines = append(w.lines, w.line.String())
	}
	if w.cut && len(w.lines) > 0 {
		w.ellipsize()
	}
}

// cluster returns the first character of s (a rune, the combining marks after it and,
// for a flag, the second regional indicator) and the rest of s. Marks the face cannot
// draw are left out, which may leave an empty cluster.
func (w *wrapper) cluster(s string) (string, string) {
	r, end := utf8.DecodeRuneInString(s)
	if isRegional(r) {
		if r2, n := utf8.DecodeRuneInString(s[end:]); isRegional(r2) {
			end += n
		}
	}
	kept := end  // s[:kept] is kept as it is…
	var b []byte // …followed by b, once a mark was dropped.
	if unicode.Is(unicode.M, r) && !w.has(r) {
		kept = 0 // A mark with nothing before it, and no glyph.
		b = []byte{}
	}
	for end < len(s) {
		m, size := utf8.DecodeRuneInString(s[end:])
		if !unicode.Is(unicode.M, m) && !isSkinTone(m) {
			break
		}
		switch {
		case b == nil && w.has(m):
			kept = end + size
		case b == nil:
			b = []byte{}
		case w.has(m) && kept > 0:
			b = utf8.AppendRune(b, m)
		}
		end += size
	}
	if b == nil {
		return s[:kept], s[end:]
	}
	return s[:kept] + string(b), s[end:]
}

func (w *wrapper) has(r rune) bool {
	_, ok := w.face.GlyphAdvance(r)
	return ok
}

// measure returns the width of s drawn after the rune prev (-1 for none), including the
// kerning between them as font.MeasureString adds it, and the last rune.
func (w *wrapper) measure(prev rune, s string) (fixed.Int26_6, rune) {
	var adv fixed.Int26_6
	for _, r := range s {
		if prev >= 0 {
			adv += w.face.Kern(prev, r)
		}
		a, _ := w.face.GlyphAdvance(r)
		adv += a
		prev = r
	}
	return adv, prev
}

// word places a word: after a space on the current line when it fits, else at the start
// of a new line; a word wider than a whole line is broken between its characters.
func (w *wrapper) word(clusters []string) {
	if len(clusters) == 0 || w.cut {
		return
	}
	if w.line.Len() > 0 {
		text := strings.Join(clusters, "")
		if w.spaced {
			text = " " + text
		}
		if adv, last := w.measure(w.last, text); w.width+adv <= w.max {
			w.line.WriteString(text)
			w.width += adv
			w.last = last
			w.spaced = false
			return
		}
		if !w.newline() {
			return
		}
	}
	w.spaced = false
	for _, c := range clusters {
		adv, last := w.measure(w.last, c)
		if w.line.Len() > 0 && w.width+adv > w.max {
			if !w.newline() {
				return
			}
			adv, last = w.measure(-1, c)
		}
		w.line.WriteString(c)
		w.width += adv
		w.last = last
	}
}

// newline finishes the current line and starts another. When the current line is the
// last one allowed it records instead that text is left out, and reports false.
func (w *wrapper) newline() bool {
	if len(w.lines)+1 >= w.maxLines {
		w.cut = true
		return false
	}
	w.lines = append(w.lines, w.line.String())
	w.line.Reset()
	w.width, w.last, w.spaced = 0, -1, false
	return true
}

// ellipsize ends the last line with the ellipsis, dropping characters from its end until
// both fit. A word that would be cut goes whole when the words before it still fill half
// the line. When the ellipsis alone is wider than a line, the line stays as it was.
func (w *wrapper) ellipsize() {
	if e, _ := w.measure(-1, Ellipsis); e > w.max {
		return
	}
	full := w.lines[len(w.lines)-1]
	line := full
	for {
		line = strings.TrimRight(line, " ")
		if w.fits(line+Ellipsis, w.max) || line == "" {
			break
		}
		line = dropLastCluster(line)
	}
	if len(line) < len(full) && full[len(line)] != ' ' {
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			words := strings.TrimRight(line[:i], " ")
			if w.fits(words+Ellipsis, w.max) && !w.fits(words, w.max/2) {
				line = words
			}
		}
	}
	w.lines[len(w.lines)-1] = line + Ellipsis
}

// fits reports whether s measures at most width.
func (w *wrapper) fits(s string, width fixed.Int26_6) bool {
	adv, _ := w.measure(-1, s)
	return adv <= width
}

// dropLastCluster removes the last character of s with its marks.
func dropLastCluster(s string) string {
	for s != "" {
		r, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
		if !unicode.Is(unicode.M, r) && !isSkinTone(r) {
			if isRegional(r) {
				if r2, n2 := utf8.DecodeLastRuneInString(s); isRegional(r2) && oddRegionalRun(s) {
					s = s[:len(s)-n2]
				}
			}
			return s
		}
	}
	return s
}

// oddRegionalRun reports whether s ends in an odd number of regional indicators, so that
// the one removed after them was the second of a flag.
func oddRegionalRun(s string) bool {
	n := 0
	for s != "" {
		r, size := utf8.DecodeLastRuneInString(s)
		if !isRegional(r) {
			break
		}
		n++
		s = s[:len(s)-size]
	}
	return n%2 == 1
}

// breaksAround reports whether a line may break before and after the character: CJK
// ideographs, kana, Hangul and their punctuation are written without spaces.
func breaksAround(c string) bool {
	r, _ := utf8.DecodeRuneInString(c)
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		(r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

func isRegional(r rune) bool { return r >= 0x1f1e6 && r <= 0x1f1ff }

func isSkinTone(r rune) bool { return r >= 0x1f3fb && r <= 0x1f3ff }
