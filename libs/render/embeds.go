package render

import (
	"html"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Embeds of notes (`![[Note]]`, `![[Note#Heading]]`, `![[Note#^id]]`) are note links
// (Link.Embed) whose placeholders the page's builder replaces by the part of the embedded
// note's stored render that the fragment names (Cut: its Outline's spans, measured when
// that note was rendered), framed with the note's title and a link to it (Frame), or by
// a link when it cannot show it. An embed alone in its paragraph stands for a block: it
// is written without the paragraph around it (embedBlock), so that the frame is not a
// block inside a paragraph.

// MaxEmbedded is the allowance of embedded content in one page (frames included), beside
// the note's own HTML and under MaxPage: embeds past it show as links.
const MaxEmbedded = 4 << 20

var kindEmbedBlock = ast.NewNodeKind("EmbedBlock")

// embedBlock is a paragraph made only of an embed of a note.
type embedBlock struct{ ast.BaseBlock }

func (n *embedBlock) Kind() ast.NodeKind { return kindEmbedBlock }

func (n *embedBlock) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// embedBlocks is the AST transformer that makes an embedBlock of each paragraph (without
// a block id) whose only content is an embed of a note, and its node renderer. It runs
// after noteLinks.
type embedBlocks struct{}

func (embedBlocks) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	var paragraphs []*ast.Paragraph
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if p, ok := n.(*ast.Paragraph); ok && entering {
			if l, ok := p.FirstChild().(*wikiLinkNode); ok && l == p.LastChild() && l.Embed && isNoteLink(l.Target) &&
				p.Attributes() == nil {
				paragraphs = append(paragraphs, p)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	for _, p := range paragraphs {
		b := &embedBlock{}
		b.AppendChild(b, p.FirstChild())
		p.Parent().ReplaceChild(p.Parent(), p, b)
	}
}

func (embedBlocks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindEmbedBlock, func(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			_ = w.WriteByte('\n')
		}
		return ast.WalkContinue, nil
	})
}

// Cut is the part of html, a render whose outline is o, that an embed with fragment
// shows (Outline.Cut); a list item is put in a list of its own. ok is false when
// fragment names nothing that can be cut.
func Cut(html string, o Outline, fragment string) (string, bool) {
	s, ok := o.Cut(fragment, len(html))
	if !ok {
		return "", false
	}
	part := html[s.Start:s.End]
	if strings.HasPrefix(part, "<li") {
		part = "<ul>" + part + "</ul>"
	}
	return part, true
}

// Frame is an embed of content, cut from a render (Cut) with its links resolved, as the
// page shows it: in a frame, below the note's title leading to url.
func Frame(content, title, url string) string {
	return `<div class="embed"><p class="embed-title"><a class="wikilink" href="` + hrefAttr(url) + `">` +
		html.EscapeString(title) + `</a></p><div class="embed-content">` + content + "</div></div>"
}

// prefixIDs is html with prefix before each of its ids and each link within it, so that
// they stay unique in the page it is embedded in. The HTML of a render is sanitized, so
// ` id="` and ` href="#` occur in it only as attributes.
func prefixIDs(html, prefix string) string {
	return strings.NewReplacer(` id="`, ` id="`+prefix, ` href="#`, ` href="#`+prefix).Replace(html)
}
