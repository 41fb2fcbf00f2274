package page

import (
	"html/template"
	"time"
)

// SiteNav is what every site page shows around its content.
type SiteNav struct {
	SiteTitle string // the site's name, linking to HomeURL
	HomeURL   string
	TagsURL   string // the site's tag index
	FeedURL   string // its Atom feed (also <link rel="alternate" type="application/atom+xml"> in <head>)
	// Crumbs are the folders from the site's root down to the current one (the root itself not included), each linking to its listing.
	Crumbs []Link
	// Entries are the current folder's entries, folders first then notes, in the order given; Current marks the page's own entry.
	Entries []Entry
	// More links to the rest of the folder's entries when there are more than shown ("" when none).
	More string
}

// Link is a titled link.
type Link struct{ Text, URL string }

// Entry is one entry of a folder: a note or a folder.
type Entry struct {
	Text, URL       string
	Folder, Current bool
}

// SiteNote is what a site's note page shows besides the note (Data) and the navigation.
type SiteNote struct {
	Nav SiteNav
	// Outline is the note's headings: level 1–6, text (plain text, escape it), and the id of the heading in the page (link "#"+ID).
	Outline []Heading
	// Backlinks are the notes of the site that link to or embed this one (at most 100); BacklinksMore links to the rest ("" when none).
	Backlinks     []Link
	BacklinksMore string
	// Tags are the note's tags, each linking to its tag page (Text without the "#"; show it with one).
	Tags []Link
}

// Heading is one heading of a note's outline.
type Heading struct {
	Level    int
	Text, ID string
}

// Listing is a page of links: a folder's listing, the home when it has no note, a tag page, the tag index, the backlinks of a note.
type Listing struct {
	Nav                 SiteNav
	Title               string // "Folder name", "#tag", "Tags", "Linked from <title>"
	URL                 string // canonical URL of this page
	Theme, Accent, Font string // the owner's appearance, as in Data
	Noindex             bool
	Items               []Item
	// Next links to the next page of items ("" on the last); Prev to the first page ("" on it).
	Next, Prev string
}

// Item is one line of a listing: a folder or note, with its summary (may be "") and update time (zero: not shown).
type Item struct {
	Text, URL, Summary string
	Folder             bool
	Updated            time.Time
}

// RenderSiteNote builds a site's note page: d as the note page shows it (d.URL is the note's site URL and is the canonical link), with s around it.
// Its policy is the note page's: the one style block, and the diagram scripts and the
// note's allowances when its body needs them.
func RenderSiteNote(d Data, s SiteNote) (Page, error) {
	n := noteParts(d, siteCSS)
	n.head.Site, n.head.OGSite, n.head.Feed = s.Nav.SiteTitle, s.Nav.SiteTitle, s.Nav.FeedURL
	n.note.Tags = s.Tags
	return n.execute("sitenote", struct {
		Head          head
		Nav           navView
		Note          noteView
		Outline       []outlineItem
		Backlinks     []Link
		BacklinksMore string
	}{n.head, newNavView(s.Nav), n.note, outline(s.Outline), s.Backlinks, s.BacklinksMore})
}

// RenderListing builds a listing page. It runs no script: its policy allows the one style
// block and nothing else.
func RenderListing(l Listing) (Page, error) {
	css := stylesheet(l.Theme, l.Accent, l.Font) + siteCSS
	n := parts{
		head: head{Theme: l.Theme, Title: l.Title, Site: l.Nav.SiteTitle, OGSite: l.Nav.SiteTitle, Noindex: l.Noindex,
			Type: "website", URL: l.URL, Feed: l.Nav.FeedURL, CSS: template.CSS(css)},
		csp: policyFor(css, false),
	}
	return n.execute("listing", struct {
		Head head
		Nav  navView // Over l.Nav.
		Listing
	}{n.head, newNavView(l.Nav), l})
}

// navView is the navigation with the name of its folder, which the explorer's summary
// shows on phones.
type navView struct {
	SiteNav
	Folder string
}

func newNavView(n SiteNav) navView {
	v := navView{SiteNav: n, Folder: n.SiteTitle}
	if len(n.Crumbs) > 0 {
		v.Folder = n.Crumbs[len(n.Crumbs)-1].Text
	}
	return v
}

// outlineItem is a heading of the outline, indented by its depth below the outline's
// highest level (0–5), so that a note whose headings start at ## is not indented.
type outlineItem struct {
	Depth    int
	Text, ID string
}

func outline(hs []Heading) []outlineItem {
	top := 6
	for _, h := range hs {
		top = min(top, max(h.Level, 1))
	}
	out := make([]outlineItem, len(hs))
	for i, h := range hs {
		out[i] = outlineItem{Depth: min(max(h.Level-top, 0), 5), Text: h.Text, ID: h.ID}
	}
	return out
}

// siteTemplates are a site's pages: the navigation column (the site's title, the way up,
// the current folder's entries, tags and feed), then the page's own content, then on a
// note's page its outline and backlinks. The explorer is a <details>: closed on phones,
// where the navigation comes above the note, and shown open beside it on wide screens
// (siteCSS), so that no script is needed either way.
const siteTemplates = `{{define "nav"}}<a class="skip" href="#content">Skip to content</a>
<nav class="nav" aria-label="Site">
<a class="brand" href="{{.HomeURL}}">{{.SiteTitle}}</a>
<ul class="links">
{{- with .TagsURL}}<li><a href="{{.}}">Tags</a></li>{{end}}
{{- with .FeedURL}}<li><a href="{{.}}">Feed</a></li>{{end -}}
</ul>
{{- with .Crumbs}}
<ol class="crumbs" aria-label="Folders">
{{- range .}}<li><a href="{{.URL}}">{{.Text}}</a></li>{{end -}}
</ol>
{{- end}}
{{- if or .Entries .More}}
<details class="explorer">
<summary>{{.Folder}}</summary>
<ul class="entries">
{{- range .Entries}}
<li{{if .Folder}} class="folder"{{end}}><a href="{{.URL}}"{{if .Current}} aria-current="page"{{end}}>{{.Text}}</a></li>
{{- end}}
</ul>
{{- with .More}}
<a class="more" href="{{.}}">All entries…</a>
{{- end}}
</details>
{{- end}}
</nav>
{{- end}}

{{define "footer"}}<footer class="foot"><a href="{{.HomeURL}}">{{.SiteTitle}}</a></footer>{{end}}

{{define "sitenote"}}{{template "head" .Head}}
<body>
<div class="site">
{{template "nav" .Nav}}
<main id="content">
{{template "note" .Note}}
</main>
{{- if or .Outline .Backlinks}}
<aside class="side">
{{- with .Outline}}
<nav class="outline" aria-labelledby="on-this-page">
<h2 id="on-this-page">On this page</h2>
<ol>
{{- range .}}
<li class="d{{.Depth}}"><a href="#{{.ID}}">{{.Text}}</a></li>
{{- end}}
</ol>
</nav>
{{- end}}
{{- with .Backlinks}}
<section class="backlinks" aria-labelledby="linked-from">
<h2 id="linked-from">Linked from</h2>
<ul>
{{- range .}}
<li><a href="{{.URL}}">{{.Text}}</a></li>
{{- end}}
</ul>
{{- with $.BacklinksMore}}
<a class="more" href="{{.}}">All backlinks…</a>
{{- end}}
</section>
{{- end}}
</aside>
{{- end}}
{{template "footer" .Nav}}
</div>
</body>
</html>
{{end}}

{{define "listing"}}{{template "head" .Head}}
<body>
<div class="site">
{{template "nav" .Nav}}
<main id="content">
<h1 class="title">{{.Title}}</h1>
{{- if .Items}}
<ul class="items">
{{- range .Items}}
<li{{if .Folder}} class="folder"{{end}}><a href="{{.URL}}">{{.Text}}</a>
{{- if not .Updated.IsZero}}<time datetime="{{iso .Updated}}">{{date .Updated}}</time>{{end}}
{{- with .Summary}}<p>{{.}}</p>{{end}}</li>
{{- end}}
</ul>
{{- else}}
<p class="muted">Nothing here yet.</p>
{{- end}}
{{- if or .Prev .Next}}
<nav class="pager" aria-label="Pages">
{{- with .Prev}}<a href="{{.}}">← First page</a>{{end}}
{{- with .Next}}<a rel="next" href="{{.}}">Next page →</a>{{end -}}
</nav>
{{- end}}
</main>
{{template "footer" .Nav}}
</div>
</body>
</html>
{{end}}`

// folderIcon is the explorer's and listings' mark of a folder, drawn in the text's colour
// through a mask (an image of the page's own, allowed by img-src data:).
const folderIcon = `url("data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Cpath d='M1 3.5C1 2.7 1.7 2 2.5 2h3.6l1.6 1.8h5.8c.8 0 1.5.7 1.5 1.5v7.2c0 .8-.7 1.5-1.5 1.5h-11C1.7 14 1 13.3 1 12.5z'/%3E%3C/svg%3E")`

// siteCSS lays a site's pages out after baseCSS, phones first: the navigation above the
// page and the outline and backlinks below it; from 761 px the navigation is a column on
// the left with the explorer open; from 1200 px the outline and backlinks are a column on
// the right. The explorer is shown open through ::details-content where the browser has
// it; elsewhere it stays a <details> that opens on a click.
const siteCSS = `.skip{position:absolute;left:-100vw}.skip:focus{left:1rem;top:1rem;z-index:1;background:var(--bg);padding:.3rem .6rem}
.site{display:grid;grid-template-columns:minmax(0,1fr);grid-template-areas:"nav" "main" "side" "foot";min-height:100vh}
.site>main{grid-area:main;width:100%}
.nav{grid-area:nav;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.75rem 1rem;background:var(--soft);border-bottom:1px solid var(--line);font-size:.92rem;line-height:1.45}
.nav a{text-decoration:none}.nav a:hover{text-decoration:underline}
.brand{flex:1;min-width:0;font-weight:700;font-size:1.05rem;color:var(--fg)}
.nav :is(ul,ol),.side :is(ul,ol){list-style:none;margin:0;padding:0}
.links{display:flex;gap:1rem}.links a{color:var(--muted)}
.crumbs{flex-basis:100%;display:flex;flex-wrap:wrap;color:var(--muted)}
.crumbs li+li::before{content:"›";margin:0 .4rem}.crumbs a{color:var(--muted)}
.explorer{flex-basis:100%}
.explorer>summary{cursor:pointer;font-weight:600;display:flex;align-items:center;padding:.4rem .7rem;border:1px solid var(--line);border-radius:8px;background:var(--bg);list-style:none}
.explorer>summary::-webkit-details-marker{display:none}
.explorer>summary::after{content:"";flex:none;width:.45em;height:.45em;margin:0 .25em 0 auto;border:solid var(--muted);border-width:0 2px 2px 0;transform:translateY(-.15em) rotate(45deg)}
.explorer[open]>summary::after{transform:translateY(.1em) rotate(-135deg)}
.entries{margin:.3rem 0 .2rem}
.entries a{display:block;padding:.22rem .5rem .22rem 1.9rem;border-radius:6px;color:var(--fg)}
.entries a:hover{background:var(--line);text-decoration:none}
.entries a[aria-current=page]{background:color-mix(in srgb,var(--accent) 16%,transparent);color:var(--accent);font-weight:600}
.folder>a::before,.explorer>summary::before{content:"";flex:none;display:inline-block;width:1em;height:1em;margin:0 .45em 0 -1.4em;vertical-align:-.12em;background:var(--muted);mask:` + folderIcon + ` center/contain no-repeat}
.explorer>summary::before{margin:0 .5em 0 0}
.more{display:inline-block;margin:.3rem 0 0 1.9rem;font-size:.88rem}
.nav .more{margin-left:1.9rem}
.tags{list-style:none;padding:0;margin:-.75rem 0 1.5rem;display:flex;flex-wrap:wrap;gap:.4rem}.tags a{text-decoration:none}
.side{grid-area:side;width:100%;max-width:44rem;margin:0 auto;padding:0 1.25rem 1rem;font-size:.92rem;line-height:1.5}
.side>*{border-top:1px solid var(--line);padding-top:1rem;margin-bottom:1.5rem}
.side h2{font-size:.75rem;letter-spacing:.06em;text-transform:uppercase;color:var(--muted);margin:0 0 .6rem}
.side li{margin:.3rem 0}.side a{text-decoration:none}.side a:hover{text-decoration:underline}
.outline a{color:var(--fg)}
.d1{padding-left:.9rem}.d2{padding-left:1.8rem}.d3{padding-left:2.7rem}.d4{padding-left:3.6rem}.d5{padding-left:4.5rem}
.site>.foot{grid-area:foot;width:100%;max-width:44rem;margin:0 auto;padding:1.5rem 1.25rem 2.5rem;border-top:1px solid var(--line)}
.foot a{color:var(--muted);text-decoration:none}
@media (max-width:480px){.side,.site>.foot{padding-left:1rem;padding-right:1rem}}
.items{list-style:none;padding:0;margin:1.25rem 0}
.items li{display:grid;grid-template-columns:minmax(0,1fr) auto;column-gap:1rem;align-items:baseline;padding:.75rem 0;border-bottom:1px solid var(--line)}
.items li>a{font-weight:600;text-decoration:none;padding-left:1.4em}.items li>a:hover{text-decoration:underline}
.items time{color:var(--muted);font-size:.85rem;white-space:nowrap}
.items p{grid-column:1/-1;margin:.2rem 0 0 1.47em;color:var(--muted);font-size:.95rem}
.pager{display:flex;gap:1rem;margin-top:1.5rem}.pager [rel=next]{margin-left:auto}
@media (min-width:761px){
.site{grid-template-columns:16rem minmax(0,1fr);grid-template-areas:"nav main" "nav side" "nav foot";grid-template-rows:auto auto 1fr}
.nav{position:sticky;top:0;align-self:start;height:100vh;overflow-y:auto;flex-direction:column;flex-wrap:nowrap;align-items:stretch;gap:.9rem;padding:1.5rem 1rem;border:0;border-right:1px solid var(--line)}
.brand{flex:none;font-size:1.15rem;padding:0 .5rem}
.nav .links{order:1;flex-direction:column;gap:.3rem;margin-top:auto;padding:.9rem .5rem 0;border-top:1px solid var(--line)}
.nav .crumbs{flex-basis:auto;padding:0 .5rem;font-size:.88rem}
.explorer{flex-basis:auto}
.explorer>summary{padding:0 .5rem}
@supports selector(::details-content){.explorer>summary{display:none}.explorer::details-content{content-visibility:visible;display:block}}
}
@media (min-width:1200px){
.site{grid-template-columns:16rem minmax(0,1fr) 15rem;grid-template-areas:"nav main side" "nav foot side";grid-template-rows:auto 1fr}
.side{position:sticky;top:0;align-self:start;max-height:100vh;overflow-y:auto;padding:2.5rem 1.25rem 1.5rem 0}
.side>*{border:0;padding:0}
}
`
