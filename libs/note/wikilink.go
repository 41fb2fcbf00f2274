package note

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sharenote/sharenote/libs/render"
)

// ReplaceImageLinks rewrites Obsidian references to uploaded images into links a browser can
// follow, because published Markdown is rendered outside the author's vault. urls maps an
// uploaded image's exact filename to its public URL, which the caller has already escaped.
//
// The references are those the page shows (render.References): nothing inside code spans,
// fenced or indented code, math or %%comments%% is rewritten. A reference names an image
// when its target (the name before any "#anchor" or "|text") equals a key of urls exactly
// (case-sensitively):
//
//   - the embed ![[name]] becomes ![name](url): ![[name|300]] and ![[name|300x200]] keep
//     the size, ![name|300](url); ![[name|text]] makes text the alt text;
//   - the link [[name]] becomes the bare url, and [[name|text]] the link [text](url);
//   - a Markdown link or image whose destination is [[name]], ![alt]([[name]]) (as the
//     client writes local images), or the name itself, ![alt](my%20photo.png), gets url
//     as its destination.
//
// "[", "]" and "\" of the name or text are escaped in link text. Every other reference
// stays exactly as written. The work is linear in the length of content, and inserted
// URLs are never scanned again.
func ReplaceImageLinks(content string, urls map[string]string) string {
	if len(urls) == 0 {
		return content
	}
	return replaceImageLinks(content, render.References(content), urls)
}

// replaceImageLinks is ReplaceImageLinks with content's references already found.
func replaceImageLinks(content string, refs []render.Reference, urls map[string]string) string {
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	for _, r := range refs {
		name, start, end, ok := imageName(r)
		url, uploaded := urls[name]
		if !ok || !uploaded {
			continue
		}
		edits = append(edits, edit{start, end, imageLink(r, name, url)})
	}
	if len(edits) == 0 {
		return content
	}
	// A reference in an image's alt text comes after the image, and before its
	// destination: in the order of the source, the outer one wins.
	slices.SortStableFunc(edits, func(a, b edit) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(content))
	copied := 0
	for _, e := range edits {
		if e.start < copied {
			continue
		}
		b.WriteString(content[copied:e.start])
		b.WriteString(e.text)
		copied = e.end
	}
	b.WriteString(content[copied:])
	return b.String()
}

// imageName is the name of the file reference r names, and the range of the source to
// replace when it is an uploaded image: the whole wikilink or embed, or the destination
// of a Markdown link or image: [[name]] (as the client writes local images) or a relative
// path, percent-decoded.
func imageName(r render.Reference) (name string, start, end int, ok bool) {
	switch {
	case r.Kind == render.RefWikilink || r.Kind == render.RefEmbed:
		return r.Target, r.Start, r.End, r.Target != ""
	case r.DestStart < 0 || r.External:
		return "", 0, 0, false
	}
	name = r.Target
	if inner, isWiki := strings.CutPrefix(name, "[["); isWiki {
		inner, closed := strings.CutSuffix(inner, "]]")
		if !closed {
			return "", 0, 0, false
		}
		name = inner
	}
	return name, r.DestStart, r.DestEnd, name != ""
}

// imageLink is what reference r, naming an uploaded image by name, becomes.
func imageLink(r render.Reference, name, url string) string {
	var b strings.Builder
	switch {
	case r.Kind == render.RefLink || r.Kind == render.RefImage:
		return url
	case r.Kind == render.RefEmbed:
		b.WriteString("![")
		alt := r.Text
		if alt == "" {
			alt = name
		}
		writeLinkText(&b, alt)
		if r.Width > 0 {
			b.WriteString("|" + size(r.Width, r.Height))
		}
	case r.Text != "":
		b.WriteString("[")
		writeLinkText(&b, r.Text)
	default:
		return url
	}
	b.WriteString("](")
	b.WriteString(url)
	b.WriteString(")")
	return b.String()
}

// size writes an Obsidian size back: "300" or "300x200".
func size(width, height int) string {
	s := strconv.Itoa(width)
	if height > 0 {
		s += "x" + strconv.Itoa(height)
	}
	return s
}

// writeLinkText writes s escaped for use as Markdown link text, where an unescaped bracket
// would end the text early and a backslash would escape the character after it.
func writeLinkText(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '[', ']', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
}
