// Package page renders the public note page /s/:cuid: Markdown to HTML with goldmark,
// sanitised with a bluemonday allowlist, inside a small self-contained page whose only
// style block is allowed by its hash in the Content-Security-Policy. The page runs no
// script at all, so nothing a note contains can.
package page

import (
	"bytes"
	"regexp"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
)

// codeClassPrefix namespaces the highlighter's CSS classes.
const codeClassPrefix = "hl-"

// markdown is CommonMark plus GFM tables (alignment as attributes, not inline styles the
// CSP would block), task lists, strikethrough and autolinks, footnotes, heading anchors,
// highlighted code (CSS classes, no inline styles) and Obsidian callouts. Raw HTML in a
// note is dropped by goldmark (it is not in unsafe mode), and whatever it renders is
// sanitised again below.
var markdown = goldmark.New(
	goldmark.WithExtensions(
		extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
		extension.Strikethrough,
		extension.Linkify,
		extension.TaskList,
		extension.Footnote,
		highlighting.NewHighlighting(highlighting.WithFormatOptions(
			chromahtml.WithClasses(true), chromahtml.ClassPrefix(codeClassPrefix))),
		callouts{},
	),
	goldmark.WithParserOptions(parser.WithAutoHeadingID()),
)

// policy is the allowlist every rendered note passes through: bluemonday's policy for
// user-generated content plus exactly the attributes our Markdown features produce.
var policy = func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	token := regexp.MustCompile(`^[A-Za-z0-9_:. -]+$`)
	p.AllowAttrs("class").Matching(token).OnElements("pre", "code", "span", "div", "p", "a", "sup", "ol", "li", "hr")
	p.AllowAttrs("id").Matching(token).OnElements("h1", "h2", "h3", "h4", "h5", "h6", "li", "sup")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$`)).OnElements("input")
	p.AllowAttrs("role").Matching(regexp.MustCompile(`^doc-[a-z]+$`)).OnElements("a", "div", "sup")
	return p
}()

// Markdown renders a note's Markdown to sanitised HTML.
func Markdown(src string) ([]byte, error) {
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(src), &buf); err != nil {
		return nil, err
	}
	return policy.SanitizeBytes(buf.Bytes()), nil
}
