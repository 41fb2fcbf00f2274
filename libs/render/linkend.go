package render

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// linkEnds is goldmark's link parser for the "]" that closes a link or an image, noting
// where the link ends in the source: goldmark's nodes of links keep where they start
// only, and References gives the whole range, and the destination's, for rewriting in
// place. goldmark's parser takes the "[" and "![" that open them.
type linkEnds struct{}

// linkEnd is where the parts of the link starting at some offset are.
type linkEnd struct {
	bracket int // the "]" after its text
	end     int // just after it
	// destination and destinationEnd delimit its destination, "<>" included; -1 when it
	// has none in place.
	destination, destinationEnd int
}

var linkEndsKey = parser.NewContextKey()

// linkEndsOf are the link ends noted in pc, by the offset of their link's start.
func linkEndsOf(pc parser.Context) map[int]linkEnd {
	ends, _ := pc.Get(linkEndsKey).(map[int]linkEnd)
	if ends == nil {
		ends = map[int]linkEnd{}
		pc.Set(linkEndsKey, ends)
	}
	return ends
}

func (linkEnds) Trigger() []byte { return []byte{']'} }

func (linkEnds) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	_, segment := block.PeekLine()
	line, pos := block.Position()
	n := parser.NewLinkParser().Parse(parent, block, pc)
	_, after := block.Position()
	if n == nil {
		// The parser made no link of the "]" (and may have dropped its opener): it is
		// text, and goldmark's parser, which comes next, must not take it again.
		block.SetPosition(line, pos)
		block.Advance(1)
		return ast.NewTextSegment(segment.WithStop(segment.Start + 1))
	}
	e := linkEnd{bracket: segment.Start, end: after.Start, destination: -1, destinationEnd: -1}
	var dest []byte
	switch l := n.(type) {
	case *ast.Link:
		dest = l.Destination
	case *ast.Image:
		dest = l.Destination
	}
	src := block.Source()
	if window := src[e.bracket+1 : e.end]; len(dest) > 0 && bytes.HasPrefix(window, []byte("(")) {
		if i := bytes.Index(window, dest); i > 0 {
			e.destination, e.destinationEnd = e.bracket+1+i, e.bracket+1+i+len(dest)
			if src[e.destination-1] == '<' && e.destinationEnd < e.end && src[e.destinationEnd] == '>' {
				e.destination--
				e.destinationEnd++
			}
		}
	}
	linkEndsOf(pc)[n.Pos()] = e
	return n
}
