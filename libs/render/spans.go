package render

import (
	"bytes"
	"strconv"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// The spans of an Outline (the sections of the headings at the top of the note, and the
// blocks with an id) are measured on the final HTML, after sanitizing and after the
// generated markup is inserted: a pass writes a marker before and after each such
// element, text made of a private-use character, the run's nonce and the element's
// index, as placeholders are (generated.go), so that the sanitizer keeps them and a note
// cannot forge them; measureSpans records where they are and takes them out.
const (
	spanOpen  = "\ue004"
	spanClose = "\ue005"
)

// spanIndex numbers the elements whose spans are measured: the headings of the outline
// by anchor (0…), then its blocks by id, then the footnotes, where the last section
// ends.
type spanIndex struct {
	headings map[string]int
	blocks   map[string]int
	stop     int
}

func newSpanIndex(o *Outline) spanIndex {
	x := spanIndex{headings: make(map[string]int, len(o.Headings)), blocks: make(map[string]int, len(o.Blocks)),
		stop: len(o.Headings) + len(o.Blocks)}
	for i, h := range o.Headings {
		x.headings[h.Anchor] = i
	}
	for i, b := range o.Blocks {
		x.blocks[blockAnchor(b)] = len(o.Headings) + i
	}
	return x
}

// of is the index of the element n renders, if its span is measured: a heading at the
// top of the note, a block with an id, the footnotes.
func (x spanIndex) of(n ast.Node) (int, bool) {
	if n.Type() != ast.TypeBlock || n.Parent() == nil {
		return 0, false
	}
	if n.Kind() == east.KindFootnoteList {
		return x.stop, true
	}
	v, ok := n.AttributeString("id")
	id, isBytes := v.([]byte)
	if !ok || !isBytes {
		return 0, false
	}
	if n.Kind() == ast.KindHeading {
		k, ok := x.headings[string(id)]
		return k, ok && n.Parent().Kind() == ast.KindDocument
	}
	k, ok := x.blocks[string(id)]
	return k, ok
}

// markSpan writes the marker of n's start when entering, of its end when not, if n's
// span is measured.
func (s *sink) markSpan(n ast.Node, entering bool) {
	k, ok := s.spans.of(n)
	if !ok {
		return
	}
	mark := spanClose
	if entering {
		mark = spanOpen
	}
	_, _ = s.WriteString(mark + s.nonce + strconv.Itoa(k) + placeholderClose)
}

// measureSpans takes the span markers with nonce out of html and sets the spans of o
// (whose elements x numbers) to where they were.
func measureSpans(html []byte, nonce string, o *Outline, x spanIndex) []byte {
	starts, ends := make([]int, x.stop+1), make([]int, x.stop+1)
	for i := range starts {
		starts[i], ends[i] = -1, -1
	}
	out := make([]byte, 0, len(html))
	for {
		i := bytes.Index(html, []byte(nonce))
		if i < len(spanOpen) {
			if i < 0 {
				out = append(out, html...)
				break
			}
			out, html = append(out, html[:i+len(nonce)]...), html[i+len(nonce):]
			continue
		}
		mark := string(html[i-len(spanOpen) : i])
		rest := html[i+len(nonce):]
		end := bytes.Index(rest, []byte(placeholderClose))
		k, err := strconv.Atoi(string(rest[:max(end, 0)]))
		if mark != spanOpen && mark != spanClose || end < 0 || err != nil || k < 0 || k > x.stop {
			// Another placeholder of the run (a link's): kept.
			out, html = append(out, html[:i+len(nonce)]...), html[i+len(nonce):]
			continue
		}
		out = append(out, html[:i-len(spanOpen)]...)
		if mark == spanOpen {
			starts[k] = len(out)
		} else {
			ends[k] = len(out)
		}
		html = rest[end+len(placeholderClose):]
	}
	setSpans(o, starts, ends, len(out))
	return out
}

// setSpans gives o the spans measured: a block its start and end, a heading at the top
// its start up to the start of the next such heading of the same or a higher level, or
// of the footnotes, or the end of the HTML (of length n).
func setSpans(o *Outline, starts, ends []int, n int) {
	h := len(o.Headings)
	stop := n
	if s := starts[len(starts)-1]; s >= 0 {
		stop = s
	}
	// The headings whose section has not ended yet, each of a lower level than the one
	// before it.
	var open []int
	for j := range h {
		if starts[j] < 0 {
			continue
		}
		for len(open) > 0 && o.Headings[open[len(open)-1]].Level >= o.Headings[j].Level {
			i := open[len(open)-1]
			o.Headings[i].Section = &Span{Start: starts[i], End: starts[j]}
			open = open[:len(open)-1]
		}
		open = append(open, j)
	}
	for _, i := range open {
		o.Headings[i].Section = &Span{Start: starts[i], End: max(stop, starts[i])}
	}
	if len(o.Blocks) > 0 {
		o.BlockSpans = make([]Span, len(o.Blocks))
		for i := range o.Blocks {
			if s, e := starts[h+i], ends[h+i]; s >= 0 && e > s {
				o.BlockSpans[i] = Span{Start: s, End: e}
			}
		}
	}
}
