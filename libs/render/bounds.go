package render

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// bounds is the goldmark extension that keeps a parse linear in the length of the note.
// goldmark's own parsers do work quadratic in the length of a block for some inputs, and
// goldmark cannot be told to stop, so bounds refuses the constructs that would start that
// work, before goldmark's parsers see them:
//
//   - Containers (block quotes, list items, footnotes) nest at most maxNesting deep. For
//     each level goldmark measures the line's indentation from its start again, so a
//     line of 64 KiB of ">" took 2.9 s. The rest of a line that would open a container
//     deeper than that is shown as plain text.
//   - Each block (paragraph, heading, table cell) may cost goldmark workPerByte units
//     of work per byte, each unit a byte scanned, a line or a footnote definition
//     looked at or a delimiter passed over, and the blocks together workSlack more.
//     Before goldmark parses a link, wikilink, footnote reference, code span or
//     emphasis delimiter, bounds works out an upper bound of what the parse will look at: for a
//     link, the destination up to the next white space, its title up to its closing
//     character and its label; for a `[[`, the line up to the next `]]`; for a footnote
//     reference, every footnote definition; for a code span, the block up to the next
//     run of backticks as long; for a closing delimiter run, the delimiters back to the
//     opener it will match (delimiterList). A construct the
//     allowance cannot pay for is shown as plain text. Without it, 120 KiB of "[a](b"
//     took 1.9 s and 64 KiB of "*a_" 3.8 s, since goldmark scans to the end of the line
//     for each unclosed destination and back over every opener for each closer.
//
// A block with a construct shown as plain text is reported as a Fallback. Everyday notes
// stay far within both bounds: a link costs about its length, and a paragraph would
// need hundreds of emphasis delimiters for them to cost more than its length times
// workPerByte.
type bounds struct{}

// maxNesting is the deepest a container may be, counting the document and each block
// quote, list and list item around it (a level of a nested list is two).
const maxNesting = 32

// workPerByte and workSlack make the allowances of work (see bounds): workPerByte per
// byte of a block for the block, and workSlack for the whole note, which a block draws
// on when its own allowance is spent.
const (
	workPerByte = 32
	workSlack   = 256 << 10
)

// Reasons of the fallbacks of bounds.
const (
	reasonNesting = "nested too deeply"
	reasonWork    = "too many unclosed links or emphasis marks to parse"
)

func (bounds) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithBlockParsers(util.Prioritized(shallowBlocks{}, 1)),
		parser.WithParagraphTransformers(util.Prioritized(boundedDefinitions{}, 1)),
		parser.WithInlineParsers(util.Prioritized(boundedInline{}, 1)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(bounds{}, 100)))
}

func (bounds) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindClipped, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkSkipChildren, nil
		}
		s := w.(*sink)
		s.fallback(n.(*clippedNode).ref, reasonWork)
		gmhtml.DefaultWriter.RawWrite(s, n.(*clippedNode).Segment.Value(source))
		return ast.WalkSkipChildren, nil
	})
}

var kindClipped = ast.NewNodeKind("Clipped")

// clippedNode is a construct that bounds showed as plain text.
type clippedNode struct {
	ast.BaseInline
	Segment text.Segment
	ref     string // the fallback's: its block's first line
}

func (n *clippedNode) Kind() ast.NodeKind { return kindClipped }

func (n *clippedNode) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }
