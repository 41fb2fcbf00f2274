package render

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Link is a link of a render to another note, as written: `[[Target#Fragment]]`, or
// `[text](Target#Fragment)` for a Markdown link to a .md file (Target percent-decoded).
// The page's builder resolves Target to a note and Fragment (everything after the first
// "#": "Heading", "A#B" or "^id") to an anchor of it (Outline.Anchor). It is stored as
// JSON with a render, so its tags are short and stay.
type Link struct {
	Target   string `json:"t"`
	Fragment string `json:"f,omitempty"`
	// Embed: `![[Target]]`, shown inside the page when the builder can (Cut, Frame, Resolve).
	Embed bool `json:"e,omitempty"`
}

// maxLinks caps the distinct links of one note to other notes that are looked up, and
// the distinct fragments of links within the note that are: the others show as text.
const maxLinks = 256

// collectLinks returns the distinct links of doc to other notes in document order, at
// most maxLinks of them, and gives each link node its index among them.
func collectLinks(doc ast.Node) []Link {
	var links []Link
	seen := map[Link]int{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		l, ok := n.(*wikiLinkNode)
		if !ok || !entering || !isNoteLink(l.Target) {
			return ast.WalkContinue, nil
		}
		i, ok := seen[l.Link]
		if !ok {
			if len(links) == maxLinks {
				return ast.WalkContinue, nil
			}
			i = len(links)
			seen[l.Link] = i
			links = append(links, l.Link)
		}
		l.index = i + 1
		return ast.WalkContinue, nil
	})
	return links
}

// isNoteLink reports whether a link's target may name another note: it is not empty and
// names no attachment.
func isNoteLink(target string) bool {
	return target != "" && !IsAttachment(target)
}

// attachment matches the extensions of the files other than notes that Obsidian shows
// (its "accepted file formats"): images, audio, video, PDF, canvases and bases.
var attachment = regexp.MustCompile(`(?i)\.(avif|bmp|gif|jpe?g|png|svg|webp|flac|m4a|mp3|ogg|wav|webm|3gp|mkv|mov|mp4|ogv|pdf|canvas|base)$`)

// IsAttachment reports whether a link's target names a file other than a note: its
// extension is one of a file Obsidian shows (image, audio, video, PDF, canvas, base). A
// target without such an extension (none, ".md", or a dot in a note's name such as
// "v1.2 notes" or "J.R.R. Tolkien") names a note.
func IsAttachment(target string) bool {
	return attachment.MatchString(target)
}

// noteLinks is the AST transformer that makes a note link of each Markdown link to a
// note (see markdownNoteLink) and resolves the links within the note: a wikilink with
// an empty target, and a Markdown link to "#fragment" whose fragment names a heading or
// block of the note (others stay as they are). It runs after outliner.
type noteLinks struct{}

func (noteLinks) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	local := localAnchors{outline: outlineOf(pc), found: map[string]string{}}
	var links []*ast.Link
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			links = append(links, l)
		case *ast.Image:
			imageSize(l, reader.Source())
		case *wikiLinkNode:
			if l.Target == "" {
				l.Anchor = local.anchor(l.Fragment)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, l := range links {
		target, fragment, ok := markdownNoteLink(l.Destination)
		if !ok {
			continue
		}
		n := &wikiLinkNode{Link: Link{Target: target, Fragment: fragment}, Markdown: true}
		if target == "" {
			if n.Anchor = local.anchor(fragment); n.Anchor == "" {
				continue
			}
		}
		for c := l.FirstChild(); c != nil; {
			next := c.NextSibling()
			n.AppendChild(n, c)
			c = next
		}
		n.SetPos(l.Pos())
		l.Parent().ReplaceChild(l.Parent(), l, n)
	}
}

// imageSize gives img the size written at the end of its alt text, `![alt|300](x.png)`
// or `![alt|300x200](x.png)`, or as the whole of it, `![300](x.png)`, as Obsidian does,
// and takes it out of the alt text.
func imageSize(img *ast.Image, source []byte) {
	t, ok := img.LastChild().(*ast.Text)
	if !ok {
		return
	}
	keep, w, h := cutSize(string(t.Segment.Value(source)))
	if w == 0 {
		return
	}
	t.Segment = t.Segment.WithStop(t.Segment.Start + keep)
	img.SetAttributeString("width", []byte(strconv.Itoa(w)))
	if h > 0 {
		img.SetAttributeString("height", []byte(strconv.Itoa(h)))
	}
}

// cutSize reads the size at the end of an image's alt text, after its last "|" or as
// the whole of it: keep is the length of the alt text before it; w is 0 for none.
func cutSize(alt string) (keep, w, h int) {
	i := strings.LastIndexByte(alt, '|')
	if w, h = parseSize(strings.TrimSpace(alt[i+1:])); w == 0 {
		return len(alt), 0, 0
	}
	return len(strings.TrimRight(alt[:max(i, 0)], " \t")), w, h
}

// localAnchors resolves the fragments of links within a note, each distinct one once and
// at most maxLinks of them, so that the work stays linear in the note.
type localAnchors struct {
	outline *Outline
	found   map[string]string
}

func (a *localAnchors) anchor(fragment string) string {
	if anchor, ok := a.found[fragment]; ok || len(a.found) == maxLinks {
		return anchor
	}
	anchor, _ := a.outline.Anchor(fragment)
	a.found[fragment] = anchor
	return anchor
}

// scheme matches the scheme of an absolute URL, and a network path.
var scheme = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*:|//)`)

// markdownNoteLink reads a Markdown link's destination as a link to a note, as Obsidian
// does: a relative URL whose path names no attachment (it ends in ".md", or has no
// extension of a file Obsidian shows: `[x](Folder/Note)` is a note too), or "#fragment"
// alone (a link within the note). target and fragment are percent-decoded (as written
// when that fails).
func markdownNoteLink(destination []byte) (target, fragment string, ok bool) {
	dest := unescapeDestination(destination)
	if scheme.MatchString(dest) {
		return "", "", false
	}
	p, f, hasFragment := strings.Cut(dest, "#")
	if p != "" && IsAttachment(unescape(p)) || p == "" && !hasFragment {
		return "", "", false
	}
	return strings.TrimSpace(unescape(p)), strings.TrimSpace(unescape(f)), true
}

// unescapeDestination is a Markdown destination without its backslash escapes and with
// its character references resolved, as goldmark reads it.
func unescapeDestination(dest []byte) string {
	return string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(dest))))
}

// unescape is s percent-decoded, or s when it is not.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// A link to another note in a stored render is its shown text between two placeholders:
// linkOpen, the render's nonce, the link's index and placeholderClose before it, and the
// same with linkClose after it. They are text, as generated markup's placeholders are
// (see generated.go), so the sanitizer keeps them, and the nonce keeps a note from
// forging them.
const (
	linkOpen        = "\ue002"
	linkClose       = "\ue003"
	unresolvedOpen  = `<span class="wikilink unresolved">`
	unresolvedClose = "</span>"
)

// ResolveLinks returns html, a render whose placeholders have nonce, with each link i made a link
// to urls[i], or shown as plain text when urls[i] is "". urls[i] is the whole href: the
// page of the note links[i] names, with "#" and the anchor its fragment names there
// (Outline.Anchor of that note's render) when there is one, else the page alone; nothing
// is added to it here. Links whose growth would take the HTML past MaxPage show as text.
// It is linear in the length of html.
func ResolveLinks(html, nonce string, links []Link, urls []string) string {
	return Resolve(html, nonce, links, urls, nil)
}

// Resolve is ResolveLinks with embeds: each placeholder of an embed i, its text included,
// is replaced by embed(i) (an embed made by Frame; embed may be nil) when that is not ""
// and does not take the HTML past MaxPage; else it is a link as ResolveLinks makes it. The
// n-th embed written has its ids and the links within it prefixed by "e<n>-" (the page's
// own ids start with IDPrefix), so that the page's ids stay unique however often a note
// is embedded, and at every level.
func Resolve(html, nonce string, links []Link, urls []string, embed func(i int) string) string {
	if nonce == "" || !strings.Contains(html, linkOpen+nonce) {
		return html
	}
	room := MaxPage - len(html)
	embedded := 0
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
		html = rest[stop+len(tag):]
		if e := embedOf(embed, links[k], k); e != "" {
			embedded++
			e = prefixIDs(e, "e"+strconv.Itoa(embedded)+"-")
			if growth := len(e) - stop - 2*len(tag); growth <= room {
				b.WriteString(e)
				room -= growth
				continue
			}
		}
		open, closing := unresolvedOpen, unresolvedClose
		if url := urls[k]; url != "" {
			a := `<a class="wikilink" href="` + hrefAttr(url) + `">`
			if growth := len(a) + len("</a>") - 2*len(tag); growth <= room {
				open, closing = a, "</a>"
				room -= growth
			}
		}
		b.WriteString(open)
		b.WriteString(rest[:stop])
		b.WriteString(closing)
	}
}

// embedOf is embed(k) for an embed l, "" for a link or a nil embed.
func embedOf(embed func(int) string, l Link, k int) string {
	if embed == nil || !l.Embed {
		return ""
	}
	return embed(k)
}

// hrefAttr is url as the value of an href attribute.
func hrefAttr(url string) string {
	return string(util.EscapeHTML(util.URLEscape([]byte(url), false)))
}
