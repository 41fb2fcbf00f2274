package render

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/net/html"
)

// rawHTML is the goldmark extension for the HTML written in a note. goldmark reads it as
// CommonMark says, so the Markdown inside an HTML block is not parsed (`<div>This **will
// not** be bold.</div>` shows its asterisks, as in Obsidian). goldmark's renderer is not
// in unsafe mode: rawHTML renders the HTML blocks and the inline HTML instead, each piece
// through keepHTML, and policy then sanitizes the whole note:
//
//   - The elements of noteElements are kept with the attributes of noteAttrs (policy
//     checks their values); the tags of other elements are dropped and their text kept.
//   - The elements of droppedElements are dropped with their content, up to their end
//     tag or, if that comes first, the end of the HTML block, or for inline HTML the end
//     of the element holding it (a paragraph, an emphasis): an unclosed one never hides
//     the rest of the note.
//   - An iframe of a YouTube or Vimeo video is a player, any other a link (players.go).
//   - Comments, doctypes and processing instructions are dropped.
//
// A note's HTML cannot forge what the renderer generates. The ids (heading anchors,
// block ids, footnotes), classes (callouts, tags, wikilinks, code, players), roles,
// data attributes and task checkboxes of the page are the renderer's alone: no id,
// class, role, data-* or <input> of a note's HTML is kept, so that a note can neither
// take an anchor of a heading or block nor dress its HTML as generated UI. Placeholders
// of links and generated markup carry the render's nonce, which a note cannot know.
// balance then closes what the note's HTML left open and drops the end tags it did not
// open, so that a render never closes an element around it (an embed's frame, the page).
type rawHTML struct{}

func (rawHTML) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithASTTransformers(util.Prioritized(rawHTML{}, 40)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(rawHTML{}, 500)))
}

func (rawHTML) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		var fragment []byte
		lines := b.Lines()
		for i := range lines.Len() {
			line := lines.At(i)
			fragment = append(fragment, line.Value(source)...)
		}
		if b.HasClosure() {
			fragment = append(fragment, b.ClosureLine.Value(source)...)
		}
		keepHTML(w.(*sink), fragment)
		return ast.WalkContinue, nil
	})
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			keepHTML(w.(*sink), rawValue(n.(*ast.RawHTML), source))
		}
		return ast.WalkSkipChildren, nil
	})
}

// rawValue is the text of inline HTML.
func rawValue(n *ast.RawHTML, source []byte) []byte {
	var b []byte
	for i := range n.Segments.Len() {
		segment := n.Segments.At(i)
		b = append(b, segment.Value(source)...)
	}
	return b
}

// noteElements are the elements kept from a note's HTML.
var noteElements = []string{
	"a", "abbr", "b", "bdi", "bdo", "blockquote", "br", "caption", "cite", "code", "col", "colgroup",
	"dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure",
	"h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre",
	"q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strike", "strong", "sub", "summary", "sup",
	"table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "tt", "u", "ul", "var", "wbr",
}

// droppedElements are dropped from a note's HTML with their content: scripts, styles,
// templates, plugins, frames, forms and their controls, foreign markup (SVG, MathML) and
// media, whose content is fallback text for browsers that cannot show them.
var droppedElements = []string{
	"script", "style", "template", "object", "embed", "applet", "param", "iframe", "frame", "frameset",
	"noembed", "noframes", "noscript", "plaintext", "xmp", "title", "base", "link", "meta",
	"form", "input", "button", "select", "option", "optgroup", "datalist", "textarea", "fieldset",
	"legend", "label", "output", "keygen", "svg", "math", "audio", "video", "source", "track", "canvas",
}

// noteAttrs are the attributes kept from a note's HTML, by element ("" for every kept
// element). policy checks their values.
var noteAttrs = map[string][]string{
	"":           {"title", "dir", "lang", "style"},
	"a":          {"href"},
	"img":        {"src", "alt", "width", "height"},
	"td":         {"align", "colspan", "rowspan"},
	"th":         {"align", "colspan", "rowspan", "scope"},
	"col":        {"span"},
	"colgroup":   {"span"},
	"ol":         {"start", "reversed", "type"},
	"li":         {"value"},
	"details":    {"open"},
	"blockquote": {"cite"},
	"q":          {"cite"},
	"del":        {"cite", "datetime"},
	"ins":        {"cite", "datetime"},
	"time":       {"datetime"},
}

var (
	keptElement    = set(noteElements)
	droppedElement = set(droppedElements)
	voidElement    = set([]string{"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link",
		"meta", "param", "source", "track", "wbr"})
)

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// keepHTML writes fragment, a piece of a note's HTML, as rawHTML keeps it.
func keepHTML(s *sink, fragment []byte) {
	s.raw = true
	z := html.NewTokenizer(bytes.NewReader(fragment))
	skip, depth := "", 0 // the dropped element whose content is being skipped, and how deep
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		tok := z.Token()
		switch {
		case skip != "":
			if tok.Data == skip && opens(tt, tok.Data) {
				depth++
			} else if tok.Data == skip && tt == html.EndTagToken {
				if depth--; depth == 0 {
					skip = ""
				}
			}
		case tt == html.TextToken:
			_, _ = s.WriteString(html.EscapeString(tok.Data))
		case tt == html.EndTagToken:
			if keptElement[tok.Data] && !voidElement[tok.Data] {
				_, _ = s.WriteString("</" + tok.Data + ">")
			}
		case tt != html.StartTagToken && tt != html.SelfClosingTagToken:
			// A comment or a doctype.
		case droppedElement[tok.Data]:
			if tok.Data == "iframe" {
				frame(s, tok, len(fragment))
			}
			if opens(tt, tok.Data) {
				skip, depth = tok.Data, 1
			}
		case keptElement[tok.Data]:
			writeTag(s, tok)
		}
	}
}

// writeTag writes the start tag of tok, a kept element, with its attributes of
// noteAttrs, each the first time it is given. A self-closing tag of an element that is
// not void opens it, as in a browser.
func writeTag(s *sink, tok html.Token) {
	var b strings.Builder
	b.WriteString("<" + tok.Data)
	seen := map[string]bool{}
	for _, a := range tok.Attr {
		if a.Namespace != "" || seen[a.Key] || !noteAttr(tok.Data, a.Key) {
			continue
		}
		seen[a.Key] = true
		b.WriteString(" " + a.Key + `="` + html.EscapeString(a.Val) + `"`)
	}
	b.WriteString(">")
	_, _ = s.WriteString(b.String())
}

// noteAttr reports whether a note's HTML may give element the attribute key.
func noteAttr(element, key string) bool {
	for _, k := range noteAttrs[""] {
		if k == key {
			return true
		}
	}
	for _, k := range noteAttrs[element] {
		if k == key {
			return true
		}
	}
	return false
}

// Transform drops the content of the dropped elements that inline HTML opens: the nodes
// after such a start tag up to its end tag among them, or to the end of their parent.
// keepHTML drops the tags themselves. It runs before the transformers of links and
// outlines, so that no link in what the page does not show is looked up or warned of.
func (rawHTML) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	for _, open := range nodesOf[*ast.RawHTML](doc) {
		name, start := tagName(rawValue(open, source))
		if !start || !droppedElement[name] || open.Parent() == nil {
			continue // not a dropped element's start tag, or inside the content of one dropped before
		}
		for n := open.NextSibling(); n != nil; {
			next := n.NextSibling()
			raw, isRaw := n.(*ast.RawHTML)
			n.Parent().RemoveChild(n.Parent(), n)
			if isRaw {
				if end, start := tagName(rawValue(raw, source)); end == name && !start {
					break
				}
			}
			n = next
		}
	}
}

// tagName is the lower-case name of the tag that inline HTML raw is, and whether it
// opens an element (see opens); "" for a comment or the like.
func tagName(raw []byte) (name string, start bool) {
	z := html.NewTokenizer(bytes.NewReader(raw))
	switch tt := z.Next(); tt {
	case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
		name := z.Token().Data
		return name, opens(tt, name)
	}
	return "", false
}

// opens reports whether a tag of type tt opens the element name, as a browser reads it:
// a start tag of an element that is not void, self-closed or not ("<script/>" opens a
// script), but for SVG's and MathML's, which "/>" closes.
func opens(tt html.TokenType, name string) bool {
	return !voidElement[name] && (tt == html.StartTagToken ||
		tt == html.SelfClosingTagToken && name != "svg" && name != "math")
}
