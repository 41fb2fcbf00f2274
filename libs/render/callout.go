package render

import (
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// callouts is the goldmark extension for Obsidian callouts: a blockquote whose first line
// is `[!kind] Optional title` becomes a titled box, its title led by the icon of its kind. With a fold marker it is foldable, a
// <details> with its title as the <summary>: closed for `[!kind]-`, open for `[!kind]+`.
type callouts struct{}

// kindCallout is the AST node kind of a callout.
var kindCallout = ast.NewNodeKind("Callout")

// calloutNode replaces the blockquote; its children are the blockquote's.
type calloutNode struct {
	ast.BaseBlock
	Variety string
	Title   string
	Fold    string // "", "-" (folded) or "+" (unfolded)
}

func (n *calloutNode) Kind() ast.NodeKind { return kindCallout }

func (n *calloutNode) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Variety": n.Variety, "Title": n.Title, "Fold": n.Fold}, nil)
}

var calloutExpr = regexp.MustCompile(`^\[!([A-Za-z][A-Za-z0-9_-]{0,30})\]([+-]?)[ \t]*(.*)$`)

func (callouts) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithASTTransformers(util.Prioritized(callouts{}, 100)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(callouts{}, 100)))
}

// Transform turns matching blockquotes into callout nodes.
func (callouts) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	var quotes []*ast.Blockquote
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if q, ok := n.(*ast.Blockquote); ok && entering {
			quotes = append(quotes, q)
		}
		return ast.WalkContinue, nil
	})
	for _, q := range quotes {
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
		title := strings.TrimSpace(m[3])
		if title == "" {
			title = strings.ToUpper(kind[:1]) + kind[1:]
		}
		dropFirstLine(para)
		if para.ChildCount() == 0 {
			q.RemoveChild(q, para)
		}
		c := &calloutNode{Variety: kind, Title: title, Fold: m[2]}
		for child := q.FirstChild(); child != nil; {
			next := child.NextSibling()
			c.AppendChild(c, child)
			child = next
		}
		q.Parent().ReplaceChild(q.Parent(), q, c)
	}
}

// dropFirstLine removes the inline nodes of the paragraph's first line: up to and
// including the first text node that ends with a line break.
func dropFirstLine(para *ast.Paragraph) {
	for child := para.FirstChild(); child != nil; {
		next := child.NextSibling()
		para.RemoveChild(para, child)
		if t, ok := child.(*ast.Text); ok && (t.SoftLineBreak() || t.HardLineBreak()) {
			return
		}
		child = next
	}
}

func (callouts) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindCallout, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		c := n.(*calloutNode)
		box, title := "div", "p"
		if c.Fold != "" {
			box, title = "details", "summary"
		}
		if !entering {
			_, _ = w.WriteString("</" + box + ">\n")
			return ast.WalkContinue, nil
		}
		_, _ = w.WriteString("<" + box + ` class="callout callout-` + c.Variety + `"`)
		if c.Fold == "+" {
			_, _ = w.WriteString(" open")
		}
		_, _ = w.WriteString("><" + title + ` class="callout-title">`)
		// The marker `[!kind]` asked for the icon.
		w.(*sink).generate(item{markup: calloutIcon(c.Variety), source: len(c.Variety) + 3})
		_, _ = w.Write(util.EscapeHTML([]byte(c.Title)))
		_, _ = w.WriteString("</" + title + ">\n")
		return ast.WalkContinue, nil
	})
}
