package render

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// RefKind is the form of a reference.
type RefKind int

// The forms of references.
const (
	RefWikilink RefKind = iota + 1 // [[target]]
	RefEmbed                       // ![[target]]
	RefLink                        // [text](destination)
	RefImage                       // ![alt](destination)
)

// Reference is a link or embed of a note's Markdown, found as the renderer reads the
// note: what code spans, fenced or indented code, math and %%comments%% hold is data,
// never a reference.
type Reference struct {
	Kind RefKind
	// Target is what the reference names, as written without its escapes: a wikilink's
	// target before any "#" or "|" (trimmed, "\|" read as "|"), or a Markdown link's
	// destination before any "#", percent-decoded when it is relative. An absolute URL
	// (with a scheme, or starting with "//") is the whole destination, not decoded.
	Target string
	// External: a Markdown destination that is an absolute URL or a network path.
	External bool
	// Fragment is what follows the first "#" ("Heading", "A#B", "^id"), trimmed.
	Fragment string
	// Text is a wikilink's text after "|" (trimmed; "" when none or a size), a Markdown
	// link's text, or an image's alt text without its size, as written.
	Text string
	// Width and Height are an embed's or image's size, `![[x.png|300x200]]` or
	// `![alt|300](x.png)`; 0 when not given.
	Width, Height int
	// Start and End delimit the whole reference in the source, "!" included.
	Start, End int
	// DestStart and DestEnd delimit a Markdown link's destination in the source ("<"
	// and ">" included); -1 for a wikilink and for a reference-style link.
	DestStart, DestEnd int
}

// maxReferences caps the references References returns.
const maxReferences = 1 << 14

// References returns the references of src in document order, at most maxReferences of
// them. It parses src as Markdown renders it (one linear parse, within the parse bounds;
// a construct over them is text, as on the page), so a caller can rewrite a reference in
// place, by its byte range, and warn only of what the page really shows.
func References(src string) []Reference {
	if !strings.Contains(src, "[") {
		return nil // every reference has one: a note without any is not parsed
	}
	source := []byte(src)
	pc := parser.NewContext()
	doc := markdown.Parser().Parse(text.NewReader(source), parser.WithContext(pc))
	return referencesIn(doc, source, pc)
}

// referencesIn returns the references of doc, parsed from source in pc, in document
// order, at most maxReferences of them: References's scan, and the render's of the
// document it renders.
func referencesIn(doc ast.Node, source []byte, pc parser.Context) []Reference {
	ends := linkEndsOf(pc)
	var refs []Reference
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || len(refs) == maxReferences {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *wikiLinkNode:
			if n.Markdown {
				if r, ok := markdownReference(source, n.Pos(), ends, nil); ok {
					refs = append(refs, r)
				}
				break
			}
			kind := RefWikilink
			if n.Embed {
				kind = RefEmbed
			}
			refs = append(refs, Reference{Kind: kind, Target: n.Target, Fragment: n.Fragment, Text: n.Alias,
				Width: n.Width, Height: n.Height, Start: n.start, End: n.end, DestStart: -1, DestEnd: -1})
		case *ast.Link:
			if r, ok := markdownReference(source, n.Pos(), ends, n.Reference); ok {
				refs = append(refs, r)
			}
		case *ast.Image:
			if r, ok := markdownReference(source, n.Pos(), ends, n.Reference); ok {
				refs = append(refs, r)
			}
		}
		return ast.WalkContinue, nil
	})
	return refs
}

// markdownReference is the reference of the Markdown link or image at start.
func markdownReference(source []byte, start int, ends map[int]linkEnd, ref *ast.ReferenceLink) (Reference, bool) {
	e, ok := ends[start]
	if !ok {
		return Reference{}, false
	}
	r := Reference{Kind: RefLink, Start: start, End: e.end, DestStart: -1, DestEnd: -1}
	textStart := start + 1
	if source[start] == '!' {
		r.Kind, textStart = RefImage, start+2
	}
	r.Text = string(source[textStart:e.bracket])
	if r.Kind == RefImage {
		var keep int
		keep, r.Width, r.Height = cutSize(r.Text)
		r.Text = strings.TrimSpace(r.Text[:keep])
	}
	if ref == nil && e.destination >= 0 {
		r.DestStart, r.DestEnd = e.destination, e.destinationEnd
		r.Target, r.Fragment, r.External = splitDestination(source[e.destination:e.destinationEnd])
	}
	return r, true
}

// splitDestination is a Markdown destination as written (with its "<>", if any) read as
// a target and a fragment (see Reference).
func splitDestination(dest []byte) (target, fragment string, external bool) {
	if len(dest) >= 2 && dest[0] == '<' && dest[len(dest)-1] == '>' {
		dest = dest[1 : len(dest)-1]
	}
	d := unescapeDestination(dest)
	if scheme.MatchString(d) {
		return d, "", true
	}
	p, f, _ := strings.Cut(d, "#")
	return strings.TrimSpace(unescape(p)), strings.TrimSpace(unescape(f)), false
}
