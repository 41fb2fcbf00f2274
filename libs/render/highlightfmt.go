package render

import (
	"html"

	"github.com/alecthomas/chroma/v2"
)

// writeHighlighted writes the tokens of it as chroma's HTML formatter does with classes
// (chromahtml.WithClasses, ClassPrefix(CodeClassPrefix), no line numbers): classes, not
// inline styles, which the page's Content-Security-Policy would block; the page's
// stylesheet, made with the same prefix, colours them. A pre, a code,
// each line in a span of class line holding a span of class cl, each token escaped in a
// span of its class. It writes as the tokens come, so that a block over w's limit stops
// being lexed once it is; chroma's formatter first collects every token. It returns w's
// error, if any.
func writeHighlighted(w *capped, it chroma.Iterator) error {
	w.writeString(`<pre class="` + CodeClassPrefix + `chroma"><code>`)
	open := false
	for t := it(); t != chroma.EOF && w.err == nil; t = it() {
		class := tokenClass(t.Type)
		for v := t.Value; v != ""; {
			line := v
			end := false
			for i := 0; i < len(v); i++ {
				if v[i] == '\n' {
					line, end = v[:i+1], true
					break
				}
			}
			v = v[len(line):]
			if !open {
				w.writeString(`<span class="` + CodeClassPrefix + `line"><span class="` + CodeClassPrefix + `cl">`)
				open = true
			}
			if class != "" {
				w.writeString(`<span class="` + CodeClassPrefix)
				w.writeString(class)
				w.writeString(`">`)
			}
			w.writeString(html.EscapeString(line))
			if class != "" {
				w.writeString(`</span>`)
			}
			if end {
				w.writeString(`</span></span>`)
				open = false
			}
		}
	}
	if open {
		w.writeString(`</span></span>`)
	}
	w.writeString(`</code></pre>`)
	return w.err
}

// tokenClass is the class of a token type as chroma's formatter names it, but for the
// prefix: the standard name of the type or of its nearest ancestor that has one.
func tokenClass(t chroma.TokenType) string {
	for ; t != 0; t = t.Parent() {
		if class, ok := chroma.StandardTypes[t]; ok {
			return class
		}
	}
	return chroma.StandardTypes[t]
}
