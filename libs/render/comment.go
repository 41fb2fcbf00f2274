package render

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// comments is the goldmark extension for Obsidian's comments, which Obsidian shows only
// while editing: authors keep private remarks in them. `%%inline%%` within a line, and a
// block from a line that starts with `%%` to the next `%%` (or, as in Obsidian, to the
// end of the note when none follows), render as nothing. Their text is not parsed, so
// their wikilinks resolve nothing and their tags are no chips. The stored Markdown keeps
// them, and the note's public JSON returns it byte for byte: only the page leaves them
// out.
type comments struct{}

var (
	kindComment      = ast.NewNodeKind("Comment")
	kindCommentBlock = ast.NewNodeKind("CommentBlock")
)

var commentMark = []byte("%%")

type commentNode struct{ ast.BaseInline }

func (n *commentNode) Kind() ast.NodeKind { return kindComment }

func (n *commentNode) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

type commentBlockNode struct {
	ast.BaseBlock
	closed bool // its closing `%%` was read
}

func (n *commentBlockNode) Kind() ast.NodeKind { return kindCommentBlock }

func (n *commentBlockNode) IsRaw() bool { return true }

func (n *commentBlockNode) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

func (comments) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithInlineParsers(util.Prioritized(commentInline{}, 150)),
		parser.WithBlockParsers(util.Prioritized(commentBlock{}, 89)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(comments{}, 150)))
}

func (comments) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	nothing := func(util.BufWriter, []byte, ast.Node, bool) (ast.WalkStatus, error) {
		return ast.WalkSkipChildren, nil
	}
	reg.Register(kindComment, nothing)
	reg.Register(kindCommentBlock, nothing)
}

// commentInline parses `%%…%%` within a line; an opening `%%` without a closing one on
// its line is text.
type commentInline struct{}

func (commentInline) Trigger() []byte { return []byte{'%'} }

func (commentInline) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if !bytes.HasPrefix(line, commentMark) {
		return nil
	}
	end := bytes.Index(line[2:], commentMark)
	if end < 0 {
		return nil
	}
	block.Advance(2 + end + 2)
	return &commentNode{}
}

// commentBlock parses a comment from a line that starts with `%%` (after at most three
// spaces) to the line with the next `%%`. A line whose comment closes before more text
// is a paragraph with an inline comment instead.
type commentBlock struct{}

func (commentBlock) Trigger() []byte { return []byte{'%'} }

func (commentBlock) Open(_ ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, segment := reader.PeekLine()
	pos := pc.BlockOffset()
	if pos < 0 || pos > 3 || !bytes.HasPrefix(line[pos:], commentMark) {
		return nil, parser.NoChildren
	}
	rest := line[pos+2:]
	if end := bytes.Index(rest, commentMark); end >= 0 {
		if len(util.TrimRightSpace(rest[end+2:])) > 0 {
			return nil, parser.NoChildren
		}
		reader.Advance(segment.Len() - 1)
		return &commentBlockNode{closed: true}, parser.NoChildren
	}
	reader.Advance(segment.Len() - 1)
	return &commentBlockNode{}, parser.NoChildren
}

func (commentBlock) Continue(node ast.Node, reader text.Reader, _ parser.Context) parser.State {
	n := node.(*commentBlockNode)
	line, segment := reader.PeekLine()
	if n.closed || line == nil {
		return parser.Close
	}
	reader.Advance(segment.Len() - 1)
	n.closed = bytes.Contains(line, commentMark)
	return parser.Continue | parser.NoChildren
}

func (commentBlock) Close(ast.Node, text.Reader, parser.Context) {}

func (commentBlock) CanInterruptParagraph() bool { return true }

func (commentBlock) CanAcceptIndentedLine() bool { return false }
