package render

import (
	"bytes"

	"golang.org/x/net/html"
)

// balance returns sanitized HTML with every element closed within it: an end tag that
// closes no element it opened is dropped, one that closes an element opened before
// others closes those first, and what is still open at the end is closed there. A note's
// HTML may leave tags open or close what it did not open; balanced, a render never
// closes an element around it (the page's article, an embed's frame) nor leaves one open
// over what follows it (a link over the page's footer). As in a browser, a block's start
// tag first closes an open paragraph (`a<p/>b` is two paragraphs, not one in another).
// It takes time linear in the length of the HTML, which policy has left without raw
// text elements (script, style, textarea), comments or doctypes.
func balance(in []byte) []byte {
	z := html.NewTokenizer(bytes.NewReader(in))
	out := make([]byte, 0, len(in)+len(in)/16)
	var b balancer
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return b.closeTo(out, 0)
		}
		name, _ := z.TagName()
		raw := z.Raw()
		switch tag := string(name); {
		case tt == html.EndTagToken:
			if b.open[tag] > 0 {
				out = b.closeTo(out, b.last(tag)) // its own end tag included
			}
			continue
		case tt == html.StartTagToken || tt == html.SelfClosingTagToken:
			if closesParagraph[tag] && b.paragraphInScope() {
				out = b.closeTo(out, b.last("p"))
			}
			if !voidElement[tag] {
				b.push(tag) // "<div/>" opens a div, as in a browser
			}
		}
		out = append(out, raw...)
	}
}

// balancer is the stack of the elements open in balance. It finds the nearest open
// element of a name, and tells whether a paragraph is in scope, in constant time.
type balancer struct {
	stack []string
	open  map[string]int   // the open elements of each name
	at    map[string][]int // their places in stack
	// scopes are the places of the open elements that bound a paragraph's scope.
	scopes []int
}

func (b *balancer) push(tag string) {
	if b.open == nil {
		b.open, b.at = map[string]int{}, map[string][]int{}
	}
	if scopeBoundary[tag] {
		b.scopes = append(b.scopes, len(b.stack))
	}
	b.at[tag] = append(b.at[tag], len(b.stack))
	b.open[tag]++
	b.stack = append(b.stack, tag)
}

// last is the place of the nearest open element named tag, which must be open.
func (b *balancer) last(tag string) int {
	at := b.at[tag]
	return at[len(at)-1]
}

// closeTo appends to out the end tags of the elements open from place i up, and pops
// them.
func (b *balancer) closeTo(out []byte, i int) []byte {
	for len(b.stack) > i {
		top := len(b.stack) - 1
		tag := b.stack[top]
		out = append(out, "</"+tag+">"...)
		b.stack = b.stack[:top]
		b.open[tag]--
		b.at[tag] = b.at[tag][:len(b.at[tag])-1]
		if n := len(b.scopes); n > 0 && b.scopes[n-1] == top {
			b.scopes = b.scopes[:n-1]
		}
	}
	return out
}

// paragraphInScope reports whether a paragraph is open with no table or cell between it
// and the top of the stack.
func (b *balancer) paragraphInScope() bool {
	if b.open["p"] == 0 {
		return false
	}
	return len(b.scopes) == 0 || b.last("p") > b.scopes[len(b.scopes)-1]
}

// closesParagraph are the kept elements whose start tag closes an open paragraph.
var closesParagraph = set([]string{"blockquote", "details", "div", "dl", "figcaption", "figure",
	"h1", "h2", "h3", "h4", "h5", "h6", "hr", "ol", "p", "pre", "summary", "table", "ul", "li", "dd", "dt"})

// scopeBoundary are the kept elements that bound a paragraph's scope.
var scopeBoundary = set([]string{"table", "td", "th", "caption"})
