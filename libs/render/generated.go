package render

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// Markup the renderer generates, such as callout icons (SVG) and math (MathML), is not
// written into the note's HTML before it is sanitized: the sanitizer never learns to pass
// SVG or MathML, so none written in a note can get through. A pass writes a placeholder
// instead, and insert replaces the placeholders of the sanitized HTML.
//
// A placeholder is text: a private-use character, the run's nonce and the item's index.
// The nonce is 64 random bits drawn for each render, so a note cannot contain a
// placeholder of its own render: whatever it writes stays text.
//
// Generated markup has an allowance of its own beside MaxHTML: 64 KiB plus 64 times the
// bytes of the note that asked for it (MathML is 20 to 60 times its TeX), under the
// absolute cap MaxPage of the whole. Items that do not fit are left out: an icon simply,
// math as its TeX source, reported.
//
// Highlighted code takes the same way past the sanitizer, for speed, not safety: its
// placeholders (placeholderCode) are put back by the pass that wrote them, whole, and
// count toward MaxHTML like the rest of the pass (see codeBlocks).

// MaxPage caps a note's HTML with its generated markup.
const MaxPage = 12 << 20

// generatedBase and generatedFactor make the allowance of generated markup.
const (
	generatedBase   = 64 << 10
	generatedFactor = 64
)

// item is one piece of generated markup.
type item struct {
	markup string // the markup to insert; "" for none
	// tex and display are a formula for convertMath to turn into markup.
	tex     string
	display bool
	source  int // the bytes of the note that asked for it
	// without is what stands in its place when it does not fit; "" for nothing.
	without string
	// ref, when set, reports the item as a Fallback when it does not fit.
	ref string
}

// placeholders are the nonce of a run and the items its current pass generated, whose
// placeholders open with open (placeholderOpen, or placeholderCode for highlighted code).
type placeholders struct {
	open  string
	nonce string
	items []item
}

// newNonce draws the nonce of a run's placeholders. A stored render keeps its nonce
// (Result.Nonce), so renders of an earlier, longer nonce resolve as well.
func newNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

const (
	placeholderOpen  = "\ue000"
	placeholderClose = "\ue001"
	// placeholderCode opens the placeholders of highlighted code (see codeBlocks).
	placeholderCode = "\ue006"
)

// generate writes a placeholder for it.
func (s *sink) generate(it item) {
	s.gen.write(s, it)
}

// write writes a placeholder for it to s.
func (g *placeholders) write(s *sink, it item) {
	_, _ = s.WriteString(g.open + g.nonce + strconv.Itoa(len(g.items)) + placeholderClose)
	g.items = append(g.items, it)
}

// allowance is the room of generated markup in the HTML of a note of n bytes.
func (g placeholders) allowance(n int) int {
	allowance := generatedBase
	for _, it := range g.items {
		allowance += generatedFactor * it.source
	}
	return min(allowance, MaxPage-MaxHTML(n))
}

// insert replaces the placeholders of gen in html by their markup as far as allowance
// bytes go, and returns the items with a ref that it left out.
func insert(html []byte, allowance int, gen placeholders) ([]byte, []Fallback) {
	if len(gen.items) == 0 {
		return html, nil
	}
	var left []Fallback
	marker := []byte(gen.open + gen.nonce)
	size := len(html)
	for _, it := range gen.items {
		size += len(it.markup)
	}
	out := make([]byte, 0, size)
	for {
		i := bytes.Index(html, marker)
		if i < 0 {
			return append(out, html...), left
		}
		out = append(out, html[:i]...)
		rest := html[i+len(marker):]
		// Placeholders are written whole, and the sanitizer keeps text as it is.
		end := bytes.Index(rest, []byte(placeholderClose))
		k, err := strconv.Atoi(string(rest[:max(end, 0)]))
		if end < 0 || err != nil || k >= len(gen.items) {
			return append(out, rest...), left
		}
		it := gen.items[k]
		switch {
		case it.markup == "":
			out = append(out, it.without...)
		case len(it.markup) <= allowance:
			out = append(out, it.markup...)
			allowance -= len(it.markup)
		default:
			out = append(out, it.without...)
			if it.ref != "" {
				left = append(left, Fallback{Ref: it.ref, Reason: reasonLarge})
			}
		}
		html = rest[end+len(placeholderClose):]
	}
}
