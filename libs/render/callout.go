package render

import (
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// callouts is the goldmark extension for Obsidian callouts: a blockquote whose first line
// is `[!kind] Optional title` becomes a titled box, its title (inline Markdown, as in
// Obsidian) led by the icon of its kind. With a fold marker it is foldable, a <details>
// with its title as the <summary>: closed for `[!kind]-`, open for `[!kind]+`.
type callouts struct{}

// kindCallout is the AST node kind of a callout, kindCalloutTitle of its title.
var (
	kindCallout      = ast.NewNodeKind("Callout")
	kindCalloutTitle = ast.NewNodeKind("CalloutTitle")
)

// calloutNode replaces the blockquote: its first child is its title, the others are the
// blockquote's.
type calloutNode struct {
	ast.BaseBlock
	Variety string
	Fold    string // "", "-" (folded) or "+" (unfolded)
}

func (n *calloutNode) Kind() ast.NodeKind { return kindCallout }

func (n *calloutNode) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Variety": n.Variety, "Fold": n.Fold}, nil)
}

// calloutTitleNode holds the inline nodes of a callout's title.
type calloutTitleNode struct {
	ast.BaseBlock
}

func (n *calloutTitleNode) Kind() ast.NodeKind { return kindCalloutTitle }

func (n *calloutTitleNode) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

var calloutExpr = regexp.MustCompile(`^\[!([A-Za-z][A-Za-z0-9_-]{0,30})\]([+-]?)[ \t]*(.*)$`)

func (callouts) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithASTTransformers(util.Prioritized(callouts{}, 100)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(callouts{}, 100)))
}

// Transform turns matching blockquotes into callout nodes.
func (callouts) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	for _, q := range nodesOf[*ast.Blockquote](doc) {
		para, ok := q.FirstChild().(*ast.Paragraph)
		if !ok || para.Lines().Len() == 0 {
			continue
		}
		first := para.Lines().At(0)
		m := calloutExpr.FindStringSubmatch(strings.TrimRight(string(first.Value(source)), "\r\n"))
		if m == nil {
			continue
		}
		kind := strings.ToLower(m[1])
		// The title starts where the marker and the blanks after it end.
		title := &calloutTitleNode{}
		moveFirstLine(para, title, first.Start+len(m[0])-len(m[3]))
		if title.ChildCount() == 0 {
			title.AppendChild(title, ast.NewString([]byte(strings.ToUpper(kind[:1])+kind[1:])))
		}
		if para.ChildCount() == 0 {
			q.RemoveChild(q, para)
		}
		c := &calloutNode{Variety: kind, Fold: m[2]}
		if id, ok := q.AttributeString("id"); ok {
			c.SetAttributeString("id", id) // a block id (see outliner)
		}
		c.AppendChild(c, title)
		for child := q.FirstChild(); child != nil; {
			next := child.NextSibling()
			c.AppendChild(c, child)
			child = next
		}
		q.Parent().ReplaceChild(q.Parent(), q, c)
	}
}

// moveFirstLine moves the inline nodes of the paragraph's first line (up to and
// including the first text node that ends with a line break) into title, leaving out
// what lies before the source offset start: the callout's marker.
func moveFirstLine(para *ast.Paragraph, title *calloutTitleNode, start int) {
	for child := para.FirstChild(); child != nil; {
		next := child.NextSibling()
		para.RemoveChild(para, child)
		t, isText := child.(*ast.Text)
		last := isText && (t.SoftLineBreak() || t.HardLineBreak())
		switch {
		case isText && t.Segment.Stop <= start:
			// All marker.
		case isText && t.Segment.Start < start:
			t.Segment = t.Segment.WithStart(start)
			fallthrough
		default:
			if isText {
				t.SetSoftLineBreak(false)
				t.SetHardLineBreak(false)
			}
			title.AppendChild(title, child)
		}
		if last {
			return
		}
		child = next
	}
}

func (callouts) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindCallout, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		c := n.(*calloutNode)
		box, _ := c.elements()
		if !entering {
			return closeElement(w, box)
		}
		_, _ = w.WriteString("<" + box + ` class="callout callout-` + c.Variety + `"`)
		gmhtml.RenderAttributes(w, c, gmhtml.GlobalAttributeFilter)
		if c.Fold == "+" {
			_, _ = w.WriteString(" open")
		}
		_, _ = w.WriteString(">")
		return ast.WalkContinue, nil
	})
	reg.Register(kindCalloutTitle, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		c := n.Parent().(*calloutNode)
		_, tag := c.elements()
		if !entering {
			return closeElement(w, tag)
		}
		_, _ = w.WriteString("<" + tag + ` class="callout-title">`)
		// The marker `[!kind]` asked for the icon.
		w.(*sink).generate(item{markup: calloutIcon(c.Variety), source: len(c.Variety) + 3})
		return ast.WalkContinue, nil
	})
}

// elements are the HTML elements of the callout and of its title: a foldable callout is
// a <details> whose title is its <summary>.
func (n *calloutNode) elements() (box, title string) {
	if n.Fold != "" {
		return "details", "summary"
	}
	return "div", "p"
}

// closeElement writes the end tag of the element name, on a line of its own.
func closeElement(w util.BufWriter, name string) (ast.WalkStatus, error) {
	_, _ = w.WriteString("</" + name + ">\n")
	return ast.WalkContinue, nil
}
