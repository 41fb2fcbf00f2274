package render

import (
	"strings"
	"unicode/utf8"
)

// whole is src shown whole as preformatted text, for reason.
func whole(src, reason string) Result {
	return Result{
		HTML:      preformatted(src, MaxHTML(len(src))),
		Fallbacks: []Fallback{{Ref: firstLine(strings.TrimLeft(src, " \t\r\n")), Reason: reason}},
	}
}

// firstLine is the first line of b, trimmed and cut to at most 80 characters.
func firstLine(b string) string {
	if i := strings.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	b = strings.TrimSpace(b)
	n := 0
	for i := range b {
		if n == 80 {
			return strings.TrimSpace(b[:i])
		}
		n++
	}
	return b
}

// preformatted is src as one escaped preformatted block of at most limit bytes, cut at a
// character boundary. It is escaped by construction, so it needs no sanitizing.
func preformatted(src string, limit int) []byte {
	const open, end = "<pre><code>", "</code></pre>\n"
	out := make([]byte, 0, min(limit, len(open)+len(src)+len(end)))
	out = append(out, open...)
	room := limit - len(end)
	for _, c := range src {
		var entity string
		switch c {
		case '&':
			entity = "&amp;"
		case '<':
			entity = "&lt;"
		case '>':
			entity = "&gt;"
		case 0:
			c = utf8.RuneError
		}
		n := len(entity)
		if n == 0 {
			n = utf8.RuneLen(c)
		}
		if len(out)+n > room {
			break
		}
		if entity != "" {
			out = append(out, entity...)
		} else {
			out = utf8.AppendRune(out, c)
		}
	}
	return append(out, end...)
}
