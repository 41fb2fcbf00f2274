package render

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// shallowBlocks shows as plain text the rest of a line that would open a container
// deeper than maxNesting. It comes before every other block parser.
type shallowBlocks struct{ interruptingBlock }

func (shallowBlocks) Trigger() []byte {
	return []byte{'>', '-', '+', '*', '[', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'}
}

func (shallowBlocks) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if line, _ := reader.PeekLine(); pc.BlockOffset() >= 0 && bytes.HasPrefix(line[pc.BlockOffset():], []byte("[^")) {
		// Maybe a footnote's definition: see footnotes.
		n, _ := pc.Get(footnotesKey).(int)
		pc.Set(footnotesKey, n+1)
	}
	depth := 0
	for n := parent; n != nil && depth < maxNesting; n = n.Parent() {
		depth++
	}
	if depth < maxNesting || parent.Kind() == ast.KindList {
		// A list holds nothing but its items (goldmark's list parser relies on it):
		// the item opens, and the line is cut within it.
		return nil, parser.NoChildren
	}
	_, segment := reader.PeekLine()
	o := &oversized{reason: reasonNesting}
	o.Lines().Append(segment)
	reader.Advance(segment.Len() - 1)
	return o, parser.NoChildren
}

func (shallowBlocks) Continue(ast.Node, text.Reader, parser.Context) parser.State {
	return parser.Close
}

// footnotesKey counts the lines that may define a footnote. The footnote parser looks
// for a reference's definition among them all in turn.
var footnotesKey = parser.NewContextKey()
