package render

import (
	"regexp"

	"github.com/microcosm-cc/bluemonday"
)

// notePolicy is the part of policy that a note's HTML draws on: the elements of
// noteElements with the attributes of noteAttrs, their values checked, links and images
// to http, https and relative addresses (and mailto links), and the style properties of
// noteStyles. It allows nothing else, and drops with their content the elements that
// keepHTML drops so, should any reach it.
func notePolicy() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowStandardURLs() // http, https, mailto and relative; rel="nofollow" on links
	p.AllowElements(noteElements...)
	p.AllowAttrs("title").Globally()
	p.AllowAttrs("dir").Matching(regexp.MustCompile(`^(ltr|rtl|auto)$`)).Globally()
	p.AllowAttrs("lang").Matching(regexp.MustCompile(`^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,4}$`)).Globally()
	p.AllowAttrs("href").OnElements("a")
	p.AllowAttrs("src").OnElements("img")
	p.AllowAttrs("width", "height").Matching(regexp.MustCompile(`^[0-9]{1,5}%?$`)).OnElements("img")
	p.AllowAttrs("cite").OnElements("blockquote", "q", "del", "ins")
	p.AllowAttrs("datetime").Matching(bluemonday.ISO8601).OnElements("del", "ins", "time")
	small := regexp.MustCompile(`^[0-9]{1,3}$`)
	p.AllowAttrs("colspan", "rowspan").Matching(small).OnElements("td", "th")
	p.AllowAttrs("span").Matching(small).OnElements("col", "colgroup")
	p.AllowAttrs("scope").Matching(regexp.MustCompile(`^(row|col|rowgroup|colgroup)$`)).OnElements("th")
	p.AllowAttrs("start").Matching(regexp.MustCompile(`^-?[0-9]{1,9}$`)).OnElements("ol")
	p.AllowAttrs("value").Matching(regexp.MustCompile(`^-?[0-9]{1,9}$`)).OnElements("li")
	p.AllowAttrs("reversed").Matching(regexp.MustCompile(`^(reversed)?$`)).OnElements("ol")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^[1aAiI]$`)).OnElements("ol")
	for property, value := range noteStyles {
		p.AllowStyles(property).Matching(value).Globally()
	}
	for _, e := range droppedElements {
		if !voidElement[e] { // a void element has no content, nor an end tag to stop skipping
			p.SkipElementsContent(e)
		}
	}
	return p
}

// color is a CSS colour: a name, #hex, or rgb()/hsl() of numbers.
const color = `#[0-9a-f]{3,8}|[a-z]{3,30}|(rgba?|hsla?)\([0-9a-z.%, /+-]{1,64}\)`

// decoration is one word of a text-decoration value: a line, a style, or a colour. It
// has no length (the shorthand's thickness), since a thick line paints over whatever is
// near the text, the page's own header included; text-decoration-thickness and
// text-underline-offset are not allowed for the same reason.
const decoration = `none|underline|overline|line-through|solid|double|dotted|dashed|wavy|` + color

// noteStyles are the style properties a note's HTML keeps, with the values they may
// take (as bluemonday checks them: lower-cased, CSS escapes decoded). None admits a
// function but rgb() and hsl() of plain numbers, so no url() and no expression().
var noteStyles = map[string]*regexp.Regexp{
	"color":            regexp.MustCompile(`^(` + color + `)$`),
	"background-color": regexp.MustCompile(`^(` + color + `)$`),
	"text-align":       regexp.MustCompile(`^(left|right|center|justify|start|end)$`),
	"font-weight":      regexp.MustCompile(`^(normal|bold|bolder|lighter|[1-9]00)$`),
	"font-style":       regexp.MustCompile(`^(normal|italic|oblique)$`),
	"text-decoration":  regexp.MustCompile(`^(` + decoration + `)( (` + decoration + `)){0,4}$`),
}
