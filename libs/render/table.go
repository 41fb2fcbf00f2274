package render

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// tables is goldmark's GFM table extension (alignment as attributes, not inline styles
// the CSP would block) with a bound: a table may have no more cells than its Markdown
// has bytes. GFM pads every row to the header's width, so a header of a thousand
// columns over rows of a single "|" made 14 KB parse into five million cells, allocating
// 840 MB in 1.6 s. A table over the bound is shown as plain text.
type tables struct{}

func (tables) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithParagraphTransformers(util.Prioritized(boundedTables{extension.NewTableParagraphTransformer()}, 200)),
		parser.WithASTTransformers(util.Prioritized(extension.NewTableASTTransformer(), 0)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(
		util.Prioritized(extension.NewTableHTMLRenderer(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)), 500),
		util.Prioritized(tables{}, 500),
	))
}

func (tables) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindOversized, renderOversized)
}

// boundedTables turns a paragraph into a table, as GFM does, unless the table would have
// more cells than bytes; then the paragraph becomes an oversized block.
type boundedTables struct{ parser.ParagraphTransformer }

func (t boundedTables) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	if tableFits(node.Lines(), reader.Source()) {
		start, parent, next := -1, node.Parent(), node.NextSibling()
		if node.Lines().Len() > 0 {
			start = node.Lines().At(0).Start
		}
		t.ParagraphTransformer.Transform(node, reader, pc)
		moveToTable(pc, start, parent, next)
		return
	}
	o := &oversized{reason: reasonTable}
	o.SetLines(node.Lines())
	node.Parent().ReplaceChild(node.Parent(), node, o)
}

// tableFits reports whether the table that lines would make, if any, has no more cells
// than bytes. Like goldmark, it takes the first line that looks like a delimiter row as
// the table's, the line before it as the header row, and each line after it as one more
// row; every row is as wide as the delimiter row.
func tableFits(lines *text.Segments, source []byte) bool {
	for i := 1; i < lines.Len(); i++ {
		line := lines.At(i)
		row := line.Value(source)
		if !delimiterRow(row) {
			continue
		}
		columns := 0
		for _, cell := range bytes.Split(bytes.TrimSpace(row), []byte{'|'}) {
			if len(bytes.TrimSpace(cell)) > 0 {
				columns++
			}
		}
		size := lines.At(lines.Len()-1).Stop - lines.At(i-1).Start
		return columns*(lines.Len()-i) <= size
	}
	return true
}

// delimiterRow reports whether line looks like the delimiter row of a table: spaces,
// '-', ':' and '|' only, with a '-' and not only '-'.
func delimiterRow(line []byte) bool {
	dashes := false
	for _, c := range line {
		switch c {
		case '-':
			dashes = true
		case ' ', '\t', '\r', '\n', ':', '|':
		default:
			return false
		}
	}
	return dashes && len(bytes.Trim(line, "-\r\n")) > 0
}

// kindOversized is the AST node kind of a block shown as plain text because it is over
// a bound of the parse.
var kindOversized = ast.NewNodeKind("Oversized")

// oversized holds the lines of a block shown as plain text.
type oversized struct {
	ast.BaseBlock
	reason string // the fallback's
}

func (n *oversized) Kind() ast.NodeKind { return kindOversized }

// IsRaw keeps the parser from reading the lines as inline Markdown.
func (n *oversized) IsRaw() bool { return true }

func (n *oversized) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, nil, nil)
}

func renderOversized(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	s := w.(*sink)
	lines := node.Lines()
	first := lines.At(0)
	s.fallback(firstLine(string(first.Value(source))), node.(*oversized).reason)
	_, _ = s.WriteString("<pre><code>")
	for i := range lines.Len() {
		line := lines.At(i)
		gmhtml.DefaultWriter.RawWrite(s, line.Value(source))
	}
	_, _ = s.WriteString("</code></pre>\n")
	return ast.WalkContinue, nil
}
