package obsidian_test

import (
	"fmt"
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/testkit/obsidian"
)

// idealPages renders each published note of the vault as the service should: a title,
// every heading with a unique anchor, every block with ^id, every resolved link an <a> to its
// target's page and anchor, every image embed an <img>. break_ may change a page's HTML.
func idealPages(v *obsidian.Vault, break_ func(path, page string) string) map[string]obsidian.Page {
	urls, slugs := map[string]string{}, map[string][]string{}
	for i, n := range v.Published() {
		urls[n.Path] = fmt.Sprintf("http://127.0.0.1:1/s/c%03d", i)
		seen := map[string]int{}
		for _, h := range n.Headings {
			base := strings.Join(strings.Fields(obsidian.HeadingKey(h.Text)), "-")
			s := base
			if k := seen[base]; k > 0 {
				s = fmt.Sprintf("%s-%d", base, k)
			}
			seen[base]++
			slugs[n.Path] = append(slugs[n.Path], s)
		}
	}
	pages := map[string]obsidian.Page{}
	for _, n := range v.Published() {
		var b strings.Builder
		fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><h1 class=title>%s</h1>", html.EscapeString(n.Title), html.EscapeString(n.Title))
		for i, h := range n.Headings {
			fmt.Fprintf(&b, "<h%d id=%q>%s</h%d>\n", h.Level, slugs[n.Path][i], html.EscapeString(h.Text), h.Level)
		}
		for _, id := range n.Blocks {
			fmt.Fprintf(&b, "<p id=\"^%s\">a block</p>\n", id)
		}
		for _, l := range n.Links {
			switch {
			case l.PublishedPath == "":
				fmt.Fprintf(&b, "<span class=unresolved>%s</span>\n", html.EscapeString(l.Shown))
			case l.Attachment:
				b.WriteString("<img src=/i/x.png>\n")
			default:
				frag := ""
				if l.HeadingIndex >= 0 {
					frag = "#" + url.PathEscape(slugs[l.ResolvedPath][l.HeadingIndex])
				} else if l.Block != "" {
					frag = "#" + url.PathEscape("^"+l.Block)
				}
				fmt.Fprintf(&b, "<a href=\"%s%s\">%s</a>\n", urls[l.PublishedPath], frag, html.EscapeString(l.Shown))
			}
		}
		b.WriteString("</body></html>")
		page := b.String()
		if break_ != nil {
			page = break_(n.Path, page)
		}
		pages[n.Path] = obsidian.Page{URL: urls[n.Path], HTML: []byte(page)}
	}
	return pages
}

func TestCheckPagesPassesIdealPages(t *testing.T) {
	v := loadFixture(t)
	r := v.CheckPages(idealPages(v, nil))
	t.Log(r)
	if r.Resolved < 100 || r.Working != r.Resolved || len(r.Leftovers)+len(r.Images)+len(r.Titles) != 0 {
		for _, c := range r.Links {
			if !c.Working {
				t.Errorf("%s: %s: %s", c.From, c.Raw, c.Problem)
			}
		}
		t.Errorf("%s; leftovers %v, images %v, titles %v", r, r.Leftovers, r.Images, r.Titles)
	}
}

// Each kind of fault of a page is reported, on the link or page it concerns.
func TestCheckPagesReportsFaults(t *testing.T) {
	v := loadFixture(t)
	r := v.CheckPages(idealPages(v, func(p, page string) string {
		switch p {
		case "Home.md":
			// A lost link, an anchor on the wrong one of two "Notes" headings, leftovers.
			page = strings.Replace(page, `<a href="http://127.0.0.1:1/s/`, `<a href="http://127.0.0.1:1/x/`, 1)
			page = strings.Replace(page, `#notes"`, `#notes-1"`, 1)
			return strings.Replace(page, "</body>", "<p>see ^para1 and [[Plan]] and \ue001</p></body>", 1)
		case "Images.md":
			return strings.Replace(page, "<img src=/i/x.png>", "<span>pixel.png</span>", 1)
		case "Formulas.md":
			return strings.Replace(page, "<title>Formulas", "<title>Note not found", 1)
		}
		return page
	}))
	problems := map[string]string{}
	for _, c := range r.Links {
		if !c.Working {
			problems[c.From+" "+c.Raw] = c.Problem
		}
	}
	if len(problems) != 2 || !strings.Contains(problems["Home.md [[Plan]]"], "no <a>") ||
		!strings.Contains(problems["Home.md [[Languages#Notes]]"], "occurrence 2") {
		t.Errorf("link problems %q", problems)
	}
	var what []string
	for _, l := range r.Leftovers {
		what = append(what, l.Path+" "+l.What)
	}
	if strings.Join(what, ",") != "Home.md private-use character,Home.md [[,Home.md block marker ^para1" {
		t.Errorf("leftovers %q", what)
	}
	if len(r.Images) != 1 || r.Images[0].Path != "Images.md" || len(r.Titles) != 1 || r.Titles[0].Path != "Formulas.md" {
		t.Errorf("images %+v, titles %+v", r.Images, r.Titles)
	}
	if r.Working != r.Resolved-2 {
		t.Errorf("%s", r)
	}
}
