package clientcmd

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// imageRef is a reference to a local image in a note's body, by one of the forms of
// CONTRACT "Client": [[x.png]], ![[x.png]] (either with |text), ![alt](x.png).
type imageRef struct {
	// start and end delimit the text to rewrite: the whole wikilink, or the destination
	// of a Markdown image.
	start, end int
	// target is the path as written, relative to the note's folder.
	target string
	kind   refKind
	// text is a wikilink's |text, shown instead of the image's name; empty when none.
	text string
}

type refKind int

const (
	wikiLink refKind = iota
	wikiEmbed
	destination // of a Markdown image
)

// rewrite returns what the reference becomes, the image's name in CONTRACT's form
// ![alt]([[name]]) (or [text]([[name]]) for a link), which the server resolves.
func (r imageRef) rewrite(name string) string {
	if r.kind == destination {
		return "[[" + name + "]]"
	}
	text := r.text
	if text == "" {
		text = name
	}
	s := "[" + escapeLinkText(text) + "]([[" + name + "]])"
	if r.kind == wikiEmbed {
		s = "!" + s
	}
	return s
}

// imageExtensions are the extensions the server accepts: a wikilink to another file is a
// link to a note (or to something the server would not take), not an image.
var imageExtensions = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true}

// schemeOrRoot matches a destination that is not a relative path: a URL (any scheme,
// also data: and C:), a network path, an absolute path or a fragment.
var schemeOrRoot = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*:|/|\\|#)`)

// obsidianSize matches the |300 or |300x200 of an Obsidian embed, a size rather than alt text.
var obsidianSize = regexp.MustCompile(`^\d+(x\d+)?$`)

// findImageRefs returns the references to local images in a note's body, in order.
// Fenced code blocks and inline code spans are skipped: a reference shown as code is
// text, and stays as written.
func findImageRefs(body string) []imageRef {
	var refs []imageRef
	fence := ""
	for lineStart := 0; lineStart < len(body); {
		lineEnd := len(body)
		if k := strings.IndexByte(body[lineStart:], '\n'); k >= 0 {
			lineEnd = lineStart + k
		}
		trimmed := strings.TrimLeft(body[lineStart:lineEnd], " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			refs = append(refs, lineRefs(body, lineStart, lineEnd)...)
		}
		lineStart = lineEnd + 1
	}
	return refs
}

// lineRefs finds the references in body[start:end], one line outside code blocks.
func lineRefs(body string, start, end int) []imageRef {
	var refs []imageRef
	for i := start; i < end; {
		switch {
		case body[i] == '`':
			n := len(body[i:end]) - len(strings.TrimLeft(body[i:end], "`"))
			closing := strings.Index(body[i+n:end], body[i:i+n])
			if closing < 0 {
				i += n
				continue
			}
			i += n + closing + n
		case strings.HasPrefix(body[i:end], "[[") || strings.HasPrefix(body[i:end], "![["):
			embed := body[i] == '!'
			open := i + 2
			if embed {
				open++
			}
			closing := strings.Index(body[open:end], "]]")
			if closing < 0 {
				return refs
			}
			target, text, hasText := strings.Cut(body[open:open+closing], "|")
			after := open + closing + 2
			if imageExtensions[strings.ToLower(filepath.Ext(target))] && !strings.Contains(target, "://") {
				if !hasText || (embed && obsidianSize.MatchString(text)) {
					text = ""
				}
				kind := wikiLink
				if embed {
					kind = wikiEmbed
				}
				refs = append(refs, imageRef{start: i, end: after, target: target, kind: kind, text: text})
			}
			i = after
		case strings.HasPrefix(body[i:end], "!["):
			destStart, destEnd, after, ok := markdownImage(body[:end], i)
			if !ok {
				i += 2
				continue
			}
			dest := body[destStart:destEnd]
			if d, ok := strings.CutPrefix(dest, "<"); ok {
				dest = strings.TrimSuffix(d, ">")
			} else if d, err := url.PathUnescape(dest); err == nil {
				dest = d
			}
			if dest != "" && !schemeOrRoot.MatchString(dest) {
				refs = append(refs, imageRef{start: destStart, end: destEnd, target: dest, kind: destination})
			}
			i = after
		default:
			i++
		}
	}
	return refs
}

// markdownImage parses the Markdown image ![alt](dest "title") at s[i:], and returns
// where its destination starts and ends (with its <> if any) and where it ends.
func markdownImage(s string, i int) (destStart, destEnd, after int, ok bool) {
	depth := 0
	j := i + 2
alt:
	for ; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			depth++
		case ']':
			if depth == 0 {
				break alt
			}
			depth--
		}
	}
	if j+1 >= len(s) || s[j+1] != '(' {
		return 0, 0, 0, false
	}
	destStart = j + 2
	for destStart < len(s) && s[destStart] == ' ' {
		destStart++
	}
	destEnd = destStart
	if destStart < len(s) && s[destStart] == '<' {
		k := strings.IndexByte(s[destStart:], '>')
		if k < 0 {
			return 0, 0, 0, false
		}
		destEnd = destStart + k + 1
	} else {
		parens := 0
		for ; destEnd < len(s) && s[destEnd] != ' '; destEnd++ {
			if s[destEnd] == '(' {
				parens++
			} else if s[destEnd] == ')' {
				if parens == 0 {
					break
				}
				parens--
			}
		}
	}
	k := strings.IndexByte(s[destEnd:], ')')
	if k < 0 || destEnd == destStart {
		return 0, 0, 0, false
	}
	return destStart, destEnd, destEnd + k + 1, true
}

// escapeLinkText escapes the characters that would end Markdown link text early.
func escapeLinkText(s string) string {
	return strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(s)
}
