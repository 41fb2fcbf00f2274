package obsidian

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

// pageDoc is what the checker reads of a page.
type pageDoc struct {
	path    string // the page's URL without fragment: "host/path" or "/path"
	title   string
	anchors []anchor // inside <article> when the page has one: the note, not the page's chrome
	article bool
	ids     map[string]idElement
	texts   []text // text outside code, pre, script and style
	imgs    int
}

type anchor struct {
	path, fragment string
	inArticle      bool
}

// text is a text node; inLink when it is inside an <a> (where Obsidian shows a block
// link as "Note > ^id").
type text struct {
	s      string
	inLink bool
}

type idElement struct {
	text string
	nth  int // for a heading: its place among the page's headings of the same text, from 1
}

// pageKey is the part of a URL two links to the same page share.
func pageKey(u *url.URL) string { return u.Host + strings.TrimSuffix(u.Path, "/") }

func parsePage(pg Page) (*pageDoc, error) {
	base, err := url.Parse(pg.URL)
	if err != nil {
		return nil, err
	}
	root, err := html.Parse(bytes.NewReader(pg.HTML))
	if err != nil {
		return nil, err
	}
	d := &pageDoc{path: pageKey(base), ids: map[string]idElement{}}
	headings := map[string]int{}
	d.article = hasElement(root, "article")
	var walk func(n *html.Node, code, link, article bool)
	walk = func(n *html.Node, code, link, article bool) {
		if n.Type == html.TextNode && !code {
			d.texts = append(d.texts, text{n.Data, link})
		}
		if n.Type == html.ElementNode {
			switch n.Data {
			case "code", "pre", "script", "style", "title":
				code = true
			case "a":
				link = true
			case "article":
				article = true
			}
			d.element(n, base, headings, article)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, code, link, article)
		}
	}
	walk(root, false, false, false)
	if d.article {
		var in []anchor
		for _, a := range d.anchors {
			if a.inArticle {
				in = append(in, a)
			}
		}
		d.anchors = in
	}
	return d, nil
}

// element records what one element tells: title, link, id, image.
func (d *pageDoc) element(n *html.Node, base *url.URL, headings map[string]int, inArticle bool) {
	switch n.Data {
	case "title":
		d.title = strings.TrimSpace(textOf(n))
	case "img":
		d.imgs++
	case "a":
		if href := attr(n, "href"); href != "" {
			if u, err := base.Parse(href); err == nil {
				frag := u.Fragment
				u.Fragment = ""
				d.anchors = append(d.anchors, anchor{path: pageKey(u), fragment: frag, inArticle: inArticle})
			}
		}
	}
	id := attr(n, "id")
	text := textOf(n)
	if strings.TrimSpace(text) == "" && n.Parent != nil {
		text = textOf(n.Parent) // an empty <a id> or <span id> marking its parent
	}
	nth := 0
	// Headings count in the note's <article>, not the page's title.
	if len(n.Data) == 2 && n.Data[0] == 'h' && n.Data[1] >= '1' && n.Data[1] <= '6' && (inArticle || !d.article) {
		k := HeadingKey(text)
		headings[k]++
		nth = headings[k]
	}
	if id != "" {
		if _, dup := d.ids[id]; !dup {
			d.ids[id] = idElement{text: text, nth: nth}
		}
	}
}

var markerRE = regexp.MustCompile(`(?:^|\s)\^([A-Za-z0-9-]+)`)

// leftovers lists the page's text a reader must never see. A "[[" counts only as one of the
// note's wikilinks written out: an escaped \[\[ shows as "[[" in Obsidian too.
func (d *pageDoc) leftovers(n *Note, blocks map[string]bool) []Leftover {
	p := n.Path
	var out []Leftover
	for _, tx := range d.texts {
		t := tx.s
		for _, r := range t {
			if r >= 0xE000 && r <= 0xE0FF {
				out = append(out, Leftover{Path: p, What: "private-use character", Text: fmt.Sprintf("%U in %q", r, clip(t))})
				break
			}
		}
		for _, l := range n.Links {
			if !l.Markdown && strings.Contains(t, l.Raw) {
				out = append(out, Leftover{Path: p, What: "[[", Text: clip(t)})
				break
			}
		}
		if strings.Contains(t, "%%") {
			out = append(out, Leftover{Path: p, What: "%%", Text: clip(t)})
		}
		for _, m := range markerRE.FindAllStringSubmatch(t, -1) {
			if blocks[m[1]] && !tx.inLink {
				out = append(out, Leftover{Path: p, What: "block marker ^" + m[1], Text: clip(t)})
			}
		}
		if strings.Contains(t, p) && strings.Contains(p, "/") {
			out = append(out, Leftover{Path: p, What: "the note's path", Text: clip(t)})
		}
	}
	return out
}

func hasElement(n *html.Node, name string) bool {
	if n.Type == html.ElementNode && n.Data == name {
		return true
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if hasElement(c, name) {
			return true
		}
	}
	return false
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
