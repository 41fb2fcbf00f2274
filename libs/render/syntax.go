package render

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// The parts that our goldmark extensions of Obsidian's syntax share.

// inlineSyntax is an extension that both parses a syntax within a line and renders the
// nodes it parses.
type inlineSyntax interface {
	parser.InlineParser
	renderer.NodeRenderer
}

// addInline adds s to m as its inline parser and its renderer, both at priority p.
func addInline(m goldmark.Markdown, s inlineSyntax, p int) {
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(s, p)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(s, p)))
}

// addInlineAndBlock adds to m a syntax written both within a line and as a block: its
// inline parser and r, the renderer of its nodes, at priority p, and its block parser at
// blockPriority.
func addInlineAndBlock(m goldmark.Markdown, inline parser.InlineParser, block parser.BlockParser, blockPriority int,
	r renderer.NodeRenderer, p int) {
	m.Parser().AddOptions(
		parser.WithInlineParsers(util.Prioritized(inline, p)),
		parser.WithBlockParsers(util.Prioritized(block, blockPriority)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(r, p)))
}

// rawBlock is a block node of the given kind whose lines are not parsed as Markdown.
type rawBlock struct {
	ast.BaseBlock
	kind ast.NodeKind
}

func (n *rawBlock) Kind() ast.NodeKind { return n.kind }

func (n *rawBlock) IsRaw() bool { return true }

func (n *rawBlock) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// interruptingBlock gives a block parser of ours the methods in which they all agree: its
// block may interrupt a paragraph, does not start on an indented line (that is code) and
// needs nothing done when it closes.
type interruptingBlock struct{}

func (interruptingBlock) Close(ast.Node, text.Reader, parser.Context) {}

func (interruptingBlock) CanInterruptParagraph() bool { return true }

func (interruptingBlock) CanAcceptIndentedLine() bool { return false }
