package render

import (
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// highlights is the goldmark extension for Obsidian's `==highlighted text==`, rendered
// as <mark>. It is a delimiter run like GFM's strikethrough: exactly two `=`, so that
// `a == b` and `===` stay text.
type highlights struct{}

var kindHighlight = ast.NewNodeKind("Highlight")

type highlightNode struct{ ast.BaseInline }

func (n *highlightNode) Kind() ast.NodeKind { return kindHighlight }

func (n *highlightNode) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

type highlightDelimiter struct{}

func (highlightDelimiter) IsDelimiter(b byte) bool { return b == '=' }

func (highlightDelimiter) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}

func (highlightDelimiter) OnMatch(int) ast.Node { return &highlightNode{} }

func (highlights) Trigger() []byte { return []byte{'='} }

func (highlights) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	node := parser.ScanDelimiter(line, before, 2, highlightDelimiter{})
	if node == nil || node.OriginalLength != 2 || before == '=' {
		return nil
	}
	node.Segment = segment.WithStop(segment.Start + node.OriginalLength)
	block.Advance(node.OriginalLength)
	pc.PushDelimiter(node)
	return node
}

func (highlights) Extend(m goldmark.Markdown) { addInline(m, highlights{}, 500) }

func (highlights) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindHighlight, func(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			_, _ = w.WriteString("<mark>")
		} else {
			_, _ = w.WriteString("</mark>")
		}
		return ast.WalkContinue, nil
	})
}

// tags is the goldmark extension for Obsidian tags: `#tag` and `#nested/tag` after a
// space or at the start of a line become a chip. A tag is letters, digits, `_`, `-` and
// `/`, with at least one character that is not a digit (`#1` is not a tag). Code spans
// and blocks are parsed before it, and a `#` inside a URL follows no space, so neither
// grows chips.
type tags struct{}

var kindTag = ast.NewNodeKind("Tag")

type tagNode struct {
	ast.BaseInline
	Name []byte
}

func (n *tagNode) Kind() ast.NodeKind { return kindTag }

func (n *tagNode) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Name": string(n.Name)}, nil)
}

func (tags) Trigger() []byte { return []byte{'#'} }

func (tags) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	if before := block.PrecendingCharacter(); before != '\n' && !unicode.IsSpace(before) {
		return nil
	}
	line, _ := block.PeekLine()
	n, letters := 1, false
	for n < len(line) {
		r, size := utf8.DecodeRune(line[n:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '/' {
			break
		}
		letters = letters || !unicode.IsDigit(r)
		n += size
	}
	if !letters {
		return nil
	}
	name := line[1:n]
	block.Advance(n)
	return withText(&tagNode{Name: name}, "#"+string(name))
}

// withText gives an inline node of ours the text it stands for as its child, so that
// goldmark's plain-text renderings of its parent include it (an image's alt text); our
// renderers skip the children.
func withText(n ast.Node, text string) ast.Node {
	n.AppendChild(n, ast.NewString([]byte(text)))
	return n
}

func (tags) Extend(m goldmark.Markdown) { addInline(m, tags{}, 600) }

func (tags) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindTag, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			_, _ = w.WriteString(`<span class="tag">#`)
			_, _ = w.Write(util.EscapeHTML(n.(*tagNode).Name))
			_, _ = w.WriteString("</span>")
		}
		return ast.WalkSkipChildren, nil
	})
}
