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

var commentMark = []byte("%%")

var kindComment = ast.NewNodeKind("Comment")

type commentNode struct{ ast.BaseInline }

func (n *commentNode) Kind() ast.NodeKind { return kindComment }

func (n *commentNode) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

var kindCommentBlock = ast.NewNodeKind("CommentBlock")

type commentBlockNode struct {
	rawBlock
	closed bool // its closing `%%` was read
}

func (comments) Extend(m goldmark.Markdown) {
	addInlineAndBlock(m, commentInline{}, commentBlock{}, 89, comments{}, 150)
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
type commentBlock struct{ interruptingBlock }

func (commentBlock) Trigger() []byte { return []byte{'%'} }

func (commentBlock) Open(_ ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, segment := reader.PeekLine()
	pos := pc.BlockOffset()
	if pos < 0 || pos > 3 || !bytes.HasPrefix(line[pos:], commentMark) {
		return nil, parser.NoChildren
	}
	n := &commentBlockNode{rawBlock: rawBlock{kind: kindCommentBlock}}
	rest := line[pos+2:]
	if end := bytes.Index(rest, commentMark); end >= 0 {
		if len(util.TrimRightSpace(rest[end+2:])) > 0 {
			return nil, parser.NoChildren
		}
		n.closed = true
	}
	reader.Advance(segment.Len() - 1)
	return n, parser.NoChildren
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
