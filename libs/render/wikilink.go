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
)

// wikilinks is the goldmark extension for Obsidian's links between notes: `[[Title]]`,
// `[[Title|shown]]`, `[[Title#Heading]]` and the embed `![[Title]]`, on one line. A link
// whose title Options.Resolve resolves becomes a link to that note (to the heading's id,
// as the note's page makes it), any other shows its text as plain text: the shown part,
// else the title and any heading as Obsidian shows them, "Title > Heading". Image
// references that the note's own images resolve were rewritten into Markdown images
// before the render (libs/note), so those left here name no image of the note and show
// as text.
type wikilinks struct{}

var kindWikiLink = ast.NewNodeKind("WikiLink")

type wikiLinkNode struct {
	ast.BaseInline
	Title    string // the note the link names: the target before any '#', trimmed
	Fragment string // the id of the heading it names, or ""
	Shown    string // what the page shows
}

func (n *wikiLinkNode) Kind() ast.NodeKind { return kindWikiLink }

func (n *wikiLinkNode) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Title": n.Title, "Fragment": n.Fragment, "Shown": n.Shown}, nil)
}

// maxWikiTarget is the longest `[[…]]` read as a link, as in libs/note's references.
const maxWikiTarget = 255

func (wikilinks) Trigger() []byte { return []byte{'[', '!'} }

func (wikilinks) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, _ := block.PeekLine()
	open := 0
	if len(line) > 0 && line[0] == '!' {
		open = 1
	}
	if !bytes.HasPrefix(line[open:], []byte("[[")) {
		return nil
	}
	start := open + 2
	end := bytes.Index(line[start:], []byte("]]"))
	if end <= 0 || end > maxWikiTarget || bytes.ContainsAny(line[start:start+end], "[]\n") {
		return nil
	}
	inner := string(line[start : start+end])
	block.Advance(start + end + 2)
	target, shown, aliased := strings.Cut(inner, "|")
	title, heading, _ := strings.Cut(target, "#")
	n := &wikiLinkNode{Title: strings.TrimSpace(title), Shown: strings.TrimSpace(shown)}
	if heading = strings.TrimSpace(heading); heading != "" {
		// The id the heading's first instance gets on its page (parser.WithAutoHeadingID).
		n.Fragment = string(parser.NewContext().IDs().Generate([]byte(heading), ast.KindHeading))
	}
	if !aliased {
		n.Shown = n.Title
		if heading != "" {
			n.Shown += " > " + heading
		}
	}
	return withText(n, n.Shown)
}

func (wikilinks) Extend(m goldmark.Markdown) {
	// Before goldmark's links (200), which would read `[[x]]` as brackets around `[x]`.
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(wikilinks{}, 199)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(wikilinks{}, 199)))
}

func (wikilinks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindWikiLink, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		l := n.(*wikiLinkNode)
		shown := util.EscapeHTML([]byte(l.Shown))
		if url, ok := w.(*sink).notes[l.Title]; ok {
			if l.Fragment != "" {
				url += "#" + l.Fragment
			}
			_, _ = w.WriteString(`<a class="wikilink" href="`)
			_, _ = w.Write(util.EscapeHTML(util.URLEscape([]byte(url), false)))
			_, _ = w.WriteString(`">`)
			_, _ = w.Write(shown)
			_, _ = w.WriteString("</a>")
		} else {
			_, _ = w.WriteString(`<span class="wikilink unresolved">`)
			_, _ = w.Write(shown)
			_, _ = w.WriteString("</span>")
		}
		return ast.WalkSkipChildren, nil
	})
}

// maxLinks caps the distinct titles of one note's links that are looked up.
const maxLinks = 256

// linkTitles returns the distinct titles doc links to, in document order, at most
// maxLinks of them.
func linkTitles(doc ast.Node) []string {
	var titles []string
	seen := map[string]bool{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*wikiLinkNode); ok && entering && l.Title != "" && !seen[l.Title] {
			seen[l.Title] = true
			titles = append(titles, l.Title)
			if len(titles) == maxLinks {
				return ast.WalkStop, nil
			}
		}
		return ast.WalkContinue, nil
	})
	return titles
}
