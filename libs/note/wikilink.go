package note

import "strings"

// ReplaceImageLinks rewrites Obsidian references to uploaded images into links a browser can
// follow, because published Markdown is rendered outside the author's vault. urls maps an
// uploaded image's exact filename to its public URL, which the caller has already escaped.
//
// The embed ![[name]] becomes ![name](url), with "[", "]" and "\" in the name escaped so that
// the link text stays intact, and a plain [[name]] becomes the bare url. The name is the text
// between "[[" and the first following "]]", as in Obsidian; it must be non-empty and equal a
// key of urls exactly (case-sensitively). Every other reference, including [[name|alias]],
// stays exactly as written. The content is scanned once from left to right and inserted URLs
// are never scanned again, so a URL containing "[[" cannot cause a second substitution, and
// the work is linear in the length of content.
func ReplaceImageLinks(content string, urls map[string]string) string {
	if len(urls) == 0 {
		return content
	}
	// A name longer than every key cannot match, so its lookup is skipped: this keeps the
	// cost of hashing candidate names bounded even for content full of unclosed "[[".
	maxName := longestKey(urls)

	var b strings.Builder
	copied := 0 // content[:copied] is already in b
	closeAt := -1
	for i := 0; ; {
		o := strings.Index(content[i:], "[[")
		if o < 0 {
			break
		}
		open := i + o
		nameStart := open + 2
		// closeAt is the first "]]" at or after nameStart: it moves only forward, because
		// there was no "]]" between an earlier nameStart and it.
		if closeAt < nameStart {
			c := strings.Index(content[nameStart:], "]]")
			if c < 0 {
				break // no reference can be closed after this point
			}
			closeAt = nameStart + c
		}
		name := content[nameStart:closeAt]
		url, ok := "", false
		if name != "" && len(name) <= maxName {
			url, ok = urls[name]
		}
		if !ok {
			i = open + 1
			continue
		}

		if b.Len() == 0 {
			b.Grow(len(content) + len(url))
		}
		writeImageLink(&b, content[copied:open], name, url)
		copied = closeAt + 2
		i = copied
	}
	if copied == 0 {
		return content
	}
	b.WriteString(content[copied:])
	return b.String()
}

// longestKey is the length of the longest key of urls.
func longestKey(urls map[string]string) int {
	n := 0
	for name := range urls {
		n = max(n, len(name))
	}
	return n
}

// writeImageLink writes before, the content from the last reference replaced up to the
// one to name, and then that reference replaced by url: an embed, whose "!" ends before,
// as a Markdown image, and a plain reference as the bare url.
func writeImageLink(b *strings.Builder, before, name, url string) {
	embed, ok := strings.CutSuffix(before, "!")
	if !ok {
		b.WriteString(before)
		b.WriteString(url)
		return
	}
	b.WriteString(embed)
	b.WriteString("![")
	writeLinkText(b, name)
	b.WriteString("](")
	b.WriteString(url)
	b.WriteString(")")
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
