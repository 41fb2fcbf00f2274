package obsidian

import (
	"fmt"
	"regexp"
	"strings"
)

// Page is one published note as a reader gets it.
type Page struct {
	URL  string // the page's address: "http://127.0.0.1:8080/s/<cuid>" (or only its path)
	HTML []byte
}

// Report is what CheckPages found on the pages of a vault.
type Report struct {
	// Resolved counts the links of published notes that Obsidian resolves to another
	// published note (or to a heading or block of the note itself), embeds of notes included;
	// Working counts those the page links to the right page and, when the fragment names a
	// heading or block that exists, to its anchor there.
	Resolved, Working int
	Links             []LinkCheck
	Leftovers         []Leftover // text a reader must never see
	Images            []ImageCheck
	Titles            []TitleCheck // pages whose <title> lacks the note's title
}

// LinkCheck is one resolved link and what its page does with it.
type LinkCheck struct {
	Link
	Linked   bool   // the page has an <a> to the target's URL
	Anchor   string // the fragment of that <a>, percent-decoded
	AnchorOK bool   // the target page has that id, on the heading or block the link names
	Working  bool
	Problem  string // why it does not work, "" when it does
}

// Leftover is text a page shows that should have been turned into markup or dropped.
type Leftover struct {
	Path, What, Text string
}

// ImageCheck is a page with fewer <img> elements than the note embeds images found in the
// vault (each such embed must be an image, never its name).
type ImageCheck struct {
	Path      string
	Want, Got int
}

// TitleCheck is a page whose <title> does not hold the note's title.
type TitleCheck struct {
	Path, Want, Got string
}

// Ratio is Working/Resolved, 1 when nothing resolves.
func (r Report) Ratio() float64 {
	if r.Resolved == 0 {
		return 1
	}
	return float64(r.Working) / float64(r.Resolved)
}

// String sums the report up in one line.
func (r Report) String() string {
	return fmt.Sprintf("links resolved by Obsidian %d, working on the pages %d (%.1f%%); leftovers %d, pages short of images %d, titles wrong %d",
		r.Resolved, r.Working, 100*r.Ratio(), len(r.Leftovers), len(r.Images), len(r.Titles))
}

// CheckPages checks the published pages of the vault, keyed by note path: a published note
// without a page is reported as a leftover of kind "no page".
func (v *Vault) CheckPages(pages map[string]Page) Report {
	var r Report
	parsed := map[string]*pageDoc{}
	for p, pg := range pages {
		d, err := parsePage(pg)
		if err != nil {
			r.Leftovers = append(r.Leftovers, Leftover{Path: p, What: "unparsable page", Text: err.Error()})
			continue
		}
		parsed[Key(p)] = d
	}
	blocks := map[string]bool{}
	for _, n := range v.Notes {
		for _, b := range n.Blocks {
			blocks[b] = true
		}
	}
	for _, n := range v.Published() {
		d := parsed[Key(n.Path)]
		if d == nil {
			r.Leftovers = append(r.Leftovers, Leftover{Path: n.Path, What: "no page"})
			continue
		}
		v.checkLinks(&r, n, d, parsed)
		r.Leftovers = append(r.Leftovers, d.leftovers(n, blocks)...)
		if want := imageEmbeds(n); d.imgs < want {
			r.Images = append(r.Images, ImageCheck{Path: n.Path, Want: want, Got: d.imgs})
		}
		if !strings.Contains(d.title, n.Title) {
			r.Titles = append(r.Titles, TitleCheck{Path: n.Path, Want: n.Title, Got: d.title})
		}
	}
	return r
}

func imageEmbeds(n *Note) int {
	c := 0
	for _, l := range n.Links {
		if l.Embed && l.Attachment && l.PublishedPath != "" && IsImage(l.ResolvedPath) {
			c++
		}
	}
	return c
}

// checkLinks matches the note's resolved links with the page's <a> elements, each <a>
// serving one link (a link written twice needs two), in three passes so that a link without
// its right <a> does not take another's: first the links to a heading or block take an <a>
// to that anchor, then the other links an <a> to the page without a fragment (or with any),
// and last the links still without one any <a> to their page that is left (linked, but to
// the wrong anchor).
func (v *Vault) checkLinks(r *Report, n *Note, d *pageDoc, pages map[string]*pageDoc) {
	var checks []LinkCheck
	var targets []*pageDoc
	for _, l := range n.Links {
		if t := pages[Key(l.PublishedPath)]; !l.Attachment && l.PublishedPath != "" && t != nil {
			checks, targets = append(checks, LinkCheck{Link: l}), append(targets, t)
		}
	}
	used := make([]bool, len(d.anchors))
	take := func(i int, fits func(l Link, a anchor) bool) {
		if checks[i].Linked {
			return
		}
		for k, a := range d.anchors {
			if !used[k] && a.path == targets[i].path && fits(checks[i].Link, a) {
				used[k], checks[i].Linked, checks[i].Anchor = true, true, a.fragment
				return
			}
		}
	}
	for i := range checks {
		if checks[i].FragmentFound() {
			t := targets[i]
			take(i, func(l Link, a anchor) bool { ok, _ := v.anchorFits(l, a.fragment, t); return ok })
		}
	}
	for i := range checks {
		if !checks[i].FragmentFound() {
			take(i, func(_ Link, a anchor) bool { return a.fragment == "" })
			take(i, func(Link, anchor) bool { return true })
		}
	}
	for i, c := range checks {
		take(i, func(Link, anchor) bool { return true })
		c = checks[i]
		if c.Linked {
			c.AnchorOK, c.Problem = v.anchorFits(c.Link, c.Anchor, targets[i])
		} else {
			c.Problem = "no <a> to " + targets[i].path
		}
		c.Working = c.Linked && (c.AnchorOK || !c.FragmentFound() || c.Embed)
		if c.Working {
			c.Problem = ""
			r.Working++
		}
		r.Resolved++
		r.Links = append(r.Links, c)
	}
}

// anchorFits reports whether a fragment of an <a> leads to what the link names on the
// target page, and if not, why.
func (v *Vault) anchorFits(l Link, fragment string, target *pageDoc) (bool, string) {
	if !l.FragmentFound() {
		return true, ""
	}
	if fragment == "" {
		return false, "no anchor"
	}
	el, ok := target.ids[fragment]
	if !ok {
		return false, "no id " + fragment + " on the target page"
	}
	if l.Block != "" {
		if !strings.EqualFold(strings.TrimPrefix(fragment, "^"), l.Block) {
			return false, "anchor " + fragment + " is not block ^" + l.Block
		}
		return true, ""
	}
	n := v.Note(l.ResolvedPath)
	h := n.Headings[l.HeadingIndex]
	if HeadingKey(el.text) != HeadingKey(plainHeading(h.Text)) {
		return false, fmt.Sprintf("anchor %s is on %q, not heading %q", fragment, el.text, h.Text)
	}
	// A repeated heading: the anchor must be on the same occurrence.
	nth, of := 0, 0
	for i, o := range n.Headings {
		if HeadingKey(o.Text) == HeadingKey(h.Text) {
			of++
			if i == l.HeadingIndex {
				nth = of
			}
		}
	}
	if of > 1 && el.nth != nth {
		return false, fmt.Sprintf("anchor %s is occurrence %d of heading %q, want %d", fragment, el.nth, h.Text, nth)
	}
	return true, ""
}

var (
	wikiInHeading = regexp.MustCompile(`!?\[\[([^\]|]*\|)?([^\]]*)\]\]`)
	mdInHeading   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// plainHeading is a heading's text as the reader sees it: links as their shown text.
func plainHeading(s string) string {
	s = wikiInHeading.ReplaceAllString(s, "$2")
	return mdInHeading.ReplaceAllString(s, "$1")
}
