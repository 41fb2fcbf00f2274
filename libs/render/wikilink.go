package render

import (
	"bytes"
	"strconv"
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
// whose title resolves (see ResolveLinks) becomes a link to that note (to the heading's id,
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
		s := w.(*sink)
		shown := util.EscapeHTML([]byte(l.Shown))
		i, ok := s.linkIndex[l]
		if !ok {
			_, _ = s.WriteString(unresolvedOpen)
			_, _ = s.Write(shown)
			_, _ = s.WriteString(unresolvedClose)
			return ast.WalkSkipChildren, nil
		}
		tag := s.nonce + strconv.Itoa(i) + placeholderClose
		_, _ = s.WriteString(linkOpen + tag)
		_, _ = s.Write(shown)
		_, _ = s.WriteString(linkClose + tag)
		return ast.WalkSkipChildren, nil
	})
}

// Link is a note link of a render: the title of the note it names and the id of the
// heading it names in that note ("" for none).
type Link struct {
	Title    string `json:"title"`
	Fragment string `json:"fragment,omitempty"`
}

// maxLinks caps the distinct links of one note that are looked up; the others show as
// text.
const maxLinks = 256

// collectLinks returns the distinct links of doc (title and fragment) in document order,
// at most maxLinks of them, and the index of each wikilink's among them.
func collectLinks(doc ast.Node) ([]Link, map[*wikiLinkNode]int) {
	var links []Link
	index := map[*wikiLinkNode]int{}
	seen := map[Link]int{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		l, ok := n.(*wikiLinkNode)
		if !ok || !entering || l.Title == "" {
			return ast.WalkContinue, nil
		}
		k := Link{Title: l.Title, Fragment: l.Fragment}
		i, ok := seen[k]
		if !ok {
			if len(links) == maxLinks {
				return ast.WalkContinue, nil
			}
			i = len(links)
			seen[k] = i
			links = append(links, k)
		}
		index[l] = i
		return ast.WalkContinue, nil
	})
	return links, index
}

// A wikilink of a stored render is its shown text between two placeholders: linkOpen,
// the render's nonce, the link's index and placeholderClose before it, and the same with
// linkClose after it. They are text, as generated markup's placeholders are (see
// generated.go), so the sanitizer keeps them, and the nonce keeps a note from forging
// them.
const (
	linkOpen        = "\ue002"
	linkClose       = "\ue003"
	unresolvedOpen  = `<span class="wikilink unresolved">`
	unresolvedClose = "</span>"
)

// ResolveLinks returns html, a render whose placeholders have nonce, with each link i made a link
// to urls[i] (the page of the note it names; the link's fragment is added here), or
// shown as plain text when urls[i] is "". Links whose growth would take the HTML past
// MaxPage show as text. It is linear in the length of html.
func ResolveLinks(html, nonce string, links []Link, urls []string) string {
	if nonce == "" || !strings.Contains(html, linkOpen+nonce) {
		return html
	}
	room := MaxPage - len(html)
	var b strings.Builder
	b.Grow(len(html))
	for {
		i := strings.Index(html, linkOpen+nonce)
		if i < 0 {
			b.WriteString(html)
			return b.String()
		}
		b.WriteString(html[:i])
		rest := html[i+len(linkOpen)+len(nonce):]
		end := strings.Index(rest, placeholderClose)
		k, err := strconv.Atoi(rest[:max(end, 0)])
		if end < 0 || err != nil || k < 0 || k >= len(links) || k >= len(urls) {
			// Not written by the render: skip the marker, keep the text.
			html = rest
			continue
		}
		rest = rest[end+len(placeholderClose):]
		tag := linkClose + nonce + strconv.Itoa(k) + placeholderClose
		stop := strings.Index(rest, tag)
		if stop < 0 {
			html = rest
			continue
		}
		open, closing := unresolvedOpen, unresolvedClose
		if url := urls[k]; url != "" {
			if f := links[k].Fragment; f != "" {
				url += "#" + f
			}
			a := `<a class="wikilink" href="` + string(util.EscapeHTML(util.URLEscape([]byte(url), false))) + `">`
			if growth := len(a) + len("</a>") - 2*len(tag); growth <= room {
				open, closing = a, "</a>"
				room -= growth
			}
		}
		b.WriteString(open)
		b.WriteString(rest[:stop])
		b.WriteString(closing)
		html = rest[stop+len(tag):]
	}
}
