package page_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/services/notes/internal/page"
)

// siteNav is a site's navigation in the folder Projects/Sharenote, with entries folders
// and notes, the note numbered current marked.
func siteNav(entries, current int) page.SiteNav {
	n := page.SiteNav{SiteTitle: "Ada's Garden", HomeURL: "/@ada/", TagsURL: "/@ada/-/tags/", FeedURL: "/@ada/-/feed.xml",
		Crumbs: []page.Link{{Text: "Projects", URL: "/@ada/Projects/"}, {Text: "Sharenote", URL: "/@ada/Projects/Sharenote/"}}}
	for i := range entries {
		e := page.Entry{Text: fmt.Sprintf("Note %d", i), URL: fmt.Sprintf("/@ada/Projects/Sharenote/Note+%d", i), Current: i == current}
		if i < entries/10 {
			e.Text, e.URL, e.Folder = fmt.Sprintf("Folder %d", i), fmt.Sprintf("/@ada/Projects/Sharenote/Folder+%d/", i), true
		}
		n.Entries = append(n.Entries, e)
	}
	return n
}

func siteData(t testing.TB, markdown string) page.Data {
	t.Helper()
	body, err := render.Markdown(context.Background(), markdown, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return page.Data{Title: "A typical note", Summary: "About five kilobytes of Markdown", Author: "Ada",
		Published: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), Updated: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC),
		Body: template.HTML(body.HTML), Properties: map[string]any{"status": "draft"},
		Theme: "system", Accent: "#5b6ee1", Font: "sans",
		URL: "https://share.example/@ada/Projects/Sharenote/Note+3", ImageURL: "https://share.example/api/og/x.png"}
}

// siteNote is what a note of the site shows around it: headings, backlinks and tags in
// the numbers given.
func siteNote(entries, backlinks, headings int) page.SiteNote {
	s := page.SiteNote{Nav: siteNav(entries, entries/10+3), Tags: []page.Link{{Text: "go", URL: "/@ada/-/tags/go"}, {Text: "web/css", URL: "/@ada/-/tags/web/css"}}}
	for i := range backlinks {
		s.Backlinks = append(s.Backlinks, page.Link{Text: fmt.Sprintf("Linking note %d", i), URL: fmt.Sprintf("/@ada/Elsewhere/Linking+note+%d", i)})
	}
	for i := range headings {
		s.Outline = append(s.Outline, page.Heading{Level: 2 + i%3, Text: fmt.Sprintf("Heading %d", i), ID: fmt.Sprintf("n-heading-%d", i)})
	}
	return s
}

func siteListing(items int) page.Listing {
	l := page.Listing{Nav: siteNav(20, -1), Title: "Sharenote", URL: "https://share.example/@ada/Projects/Sharenote/",
		Theme: "dark", Accent: "#5b6ee1", Font: "serif", Next: "/@ada/Projects/Sharenote/?cursor=abc"}
	for i := range items {
		l.Items = append(l.Items, page.Item{Text: fmt.Sprintf("Note %d", i), URL: fmt.Sprintf("/@ada/Projects/Sharenote/Note+%d", i),
			Summary: "A summary.", Updated: time.Date(2025, 4, 1+i%28, 0, 0, 0, 0, time.UTC)})
	}
	return l
}

// sitePages are a site's two kinds of page, built from the inputs of the tests.
func sitePages(t *testing.T) map[string]page.Page {
	t.Helper()
	n, err := page.RenderSiteNote(siteData(t, typicalNote), siteNote(20, 10, 6))
	if err != nil {
		t.Fatal(err)
	}
	l, err := page.RenderListing(siteListing(30))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]page.Page{"note": n, "listing": l}
}

func TestSitePageSizeStaysSmall(t *testing.T) {
	p, err := page.RenderSiteNote(siteData(t, typicalNote), siteNote(200, 100, 50))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := brotli.NewWriterLevel(&b, brotli.DefaultCompression)
	if _, err := w.Write(p.HTML); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The budget of a whole page is 150 KB compressed (CONTRACT "Sites"); what the site
	// adds to a note must leave nearly all of it to the note.
	if b.Len() > 30_000 {
		t.Errorf("a note page with 200 entries, 100 backlinks and 50 headings is %d bytes compressed (%d raw), want under 30 KB", b.Len(), len(p.HTML))
	}
}

func TestSitePagesEscapeEveryText(t *testing.T) {
	const evil = `<script>alert(1)</script>"'&`
	nav := page.SiteNav{SiteTitle: evil, HomeURL: "javascript:alert(1)", TagsURL: "/t", FeedURL: "/f",
		Crumbs: []page.Link{{Text: evil, URL: "/c"}}, Entries: []page.Entry{{Text: evil, URL: "/e", Folder: true}, {Text: evil, URL: "/n", Current: true}}, More: "/m"}
	d := siteData(t, "text")
	d.Title, d.Summary, d.Author = evil, evil, evil
	n, err := page.RenderSiteNote(d, page.SiteNote{Nav: nav, Outline: []page.Heading{{Level: 2, Text: evil, ID: `x"><script>`}},
		Backlinks: []page.Link{{Text: evil, URL: "/b"}}, Tags: []page.Link{{Text: evil, URL: "/t/x"}}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := page.RenderListing(page.Listing{Nav: nav, Title: evil, URL: "/l", Items: []page.Item{{Text: evil, URL: "/i", Summary: evil}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]page.Page{"note": n, "listing": l} {
		html := string(p.HTML)
		if strings.Contains(html, "<script") || strings.Contains(html, "javascript:") {
			t.Errorf("%s page: a text or URL is not escaped:\n%s", name, html)
		}
		if c := strings.Count(html, "&lt;script&gt;alert(1)&lt;/script&gt;"); c < 5 {
			t.Errorf("%s page shows the escaped text %d times, want every text", name, c)
		}
	}
}

func TestSitePagesMarkTheCurrentEntry(t *testing.T) {
	html := string(sitePages(t)["note"].HTML)
	current := regexp.MustCompile(`<a [^>]*aria-current="page"[^>]*>([^<]*)</a>`).FindAllStringSubmatch(html, -1)
	if len(current) != 1 || current[0][1] != "Note 5" {
		t.Errorf("current entries: %q, want Note 5 alone", current)
	}
	if html := string(sitePages(t)["listing"].HTML); strings.Contains(html, `aria-current="page"`) {
		t.Error("a listing without a current entry marks one")
	}
}

func TestSitePagesCanonicalLink(t *testing.T) {
	for name, want := range map[string]string{
		"note":    `<link rel="canonical" href="https://share.example/@ada/Projects/Sharenote/Note&#43;3">`,
		"listing": `<link rel="canonical" href="https://share.example/@ada/Projects/Sharenote/">`,
	} {
		html := string(sitePages(t)[name].HTML)
		if strings.Count(html, `rel="canonical"`) != 1 || !strings.Contains(html, want) {
			t.Errorf("%s page lacks %s", name, want)
		}
	}
}

func TestSitePagesBreadcrumbsInOrder(t *testing.T) {
	for name, p := range sitePages(t) {
		crumbs := regexp.MustCompile(`(?s)<ol class="crumbs"[^>]*>(.*?)</ol>`).FindStringSubmatch(string(p.HTML))
		if crumbs == nil {
			t.Fatalf("%s page has no breadcrumbs", name)
		}
		var got []string
		for _, m := range regexp.MustCompile(`<a href="([^"]*)">([^<]*)</a>`).FindAllStringSubmatch(crumbs[1], -1) {
			got = append(got, m[2]+" "+m[1])
		}
		if want := []string{"Projects /@ada/Projects/", "Sharenote /@ada/Projects/Sharenote/"}; !slices.Equal(got, want) {
			t.Errorf("%s page's breadcrumbs are %q, want %q", name, got, want)
		}
	}
}

// TestSitePagesAllowOnlyTheirStyle checks the policy of pages without diagrams: exactly
// the page's one style block, by the hash of its own text, and no script at all.
func TestSitePagesAllowOnlyTheirStyle(t *testing.T) {
	for name, p := range sitePages(t) {
		html := string(p.HTML)
		style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(html)
		sum := sha256.Sum256([]byte(style[1]))
		want := "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; img-src * data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
		if p.CSP != want {
			t.Errorf("%s page's CSP is %q, want %q", name, p.CSP, want)
		}
		if strings.Count(html, "<style") != 1 || strings.Contains(html, "<script") || strings.Contains(html, " style=") {
			t.Errorf("%s page has a script, a style attribute or a second style block", name)
		}
	}
}

// TestSiteNoteRunsDiagramsAsTheNotePage checks that a site's note with a diagram loads
// the same scripts under the same policy as its page at /s/, and that the allowances of
// its body's style attributes are the note page's.
func TestSiteNoteRunsDiagramsAsTheNotePage(t *testing.T) {
	for name, c := range map[string]struct{ markdown, needs string }{
		"diagram":          {"```mermaid\ngraph TD; A-->B\n```\n", "script-src 'self'"},
		"style attributes": {`<span style="color: red">red</span> and <span style="color: blue">blue</span>`, "style-src-attr 'unsafe-hashes'"},
	} {
		d := siteData(t, c.markdown)
		note, err := page.Render(d)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(note.CSP, c.needs) {
			t.Fatalf("%s: the note page's CSP %q lacks %s", name, note.CSP, c.needs)
		}
		site, err := page.RenderSiteNote(d, siteNote(10, 2, 2))
		if err != nil {
			t.Fatal(err)
		}
		scripts := regexp.MustCompile(`<script[^>]*></script>`)
		if got, want := scripts.FindAllString(string(site.HTML), -1), scripts.FindAllString(string(note.HTML), -1); !slices.Equal(got, want) {
			t.Errorf("%s: the site page's scripts are %q, the note page's %q", name, got, want)
		}
		allowances := func(csp string) string { return csp[strings.Index(csp, "frame-ancestors 'none'"):] }
		if name == "diagram" && site.CSP != note.CSP || allowances(site.CSP) != allowances(note.CSP) || !strings.Contains(site.CSP, "style-src") {
			t.Errorf("%s: the site page's CSP is %q, the note page's %q", name, site.CSP, note.CSP)
		}
	}
}

func TestSitePagesLinkTheFeedInHead(t *testing.T) {
	for name, p := range sitePages(t) {
		head, _, _ := strings.Cut(string(p.HTML), "</head>")
		if !strings.Contains(head, `<link rel="alternate" type="application/atom+xml" title="Ada&#39;s Garden" href="/@ada/-/feed.xml">`) {
			t.Errorf("%s page's head does not link the feed:\n%s", name, head)
		}
	}
}

// TestSitePagesStructure checks what a reader and a screen reader find on every site page:
// the site's navigation with its title linking home, the explorer closed (it opens on a
// phone; wide screens show it open by CSS), the page's content in <main>, and the site's
// title in the footer rather than the service's.
func TestSitePagesStructure(t *testing.T) {
	for name, p := range sitePages(t) {
		html := string(p.HTML)
		for _, want := range []string{
			`<title>` + map[string]string{"note": "A typical note", "listing": "Sharenote"}[name] + ` · Ada&#39;s Garden</title>`,
			`<nav class="nav" aria-label="Site">`,
			`<a class="brand" href="/@ada/">Ada&#39;s Garden</a>`,
			`<details class="explorer">`,
			`<main id="content">`,
			`<a href="/@ada/-/tags/">Tags</a>`,
			`<footer class="foot"><a href="/@ada/">Ada&#39;s Garden</a></footer>`,
		} {
			if !strings.Contains(html, want) {
				t.Errorf("%s page lacks %s", name, want)
			}
		}
		if strings.Contains(html, "Shared with") {
			t.Errorf("%s page's footer names the service", name)
		}
	}
}

func TestSiteNoteShowsOutlineBacklinksAndTags(t *testing.T) {
	s := siteNote(20, 3, 3)
	s.BacklinksMore = "/@ada/-/backlinks/Note+3"
	p, err := page.RenderSiteNote(siteData(t, typicalNote), s)
	if err != nil {
		t.Fatal(err)
	}
	html := string(p.HTML)
	for _, want := range []string{
		`<aside class="side">`,
		`<h2 id="on-this-page">On this page</h2>`,
		`<li class="d0"><a href="#n-heading-0">Heading 0</a></li>`, // The outline's highest level is not indented.
		`<li class="d1"><a href="#n-heading-1">Heading 1</a></li>`,
		`<h2 id="linked-from">Linked from</h2>`,
		`<li><a href="/@ada/Elsewhere/Linking&#43;note&#43;2">Linking note 2</a></li>`,
		`<a class="more" href="/@ada/-/backlinks/Note&#43;3">`,
		`<a class="tag" href="/@ada/-/tags/web/css">#web/css</a>`,
		`<meta property="og:site_name" content="Ada&#39;s Garden">`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// A note without headings or backlinks has no side column.
	p, err = page.RenderSiteNote(siteData(t, "text"), page.SiteNote{Nav: siteNav(3, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(p.HTML), "<aside") {
		t.Error("a note without outline or backlinks has an aside")
	}
}

func TestListingShowsItemsAndPages(t *testing.T) {
	l := siteListing(2)
	l.Items[0].Folder, l.Items[0].Updated, l.Items[0].Summary = true, time.Time{}, ""
	l.Noindex = true
	p, err := page.RenderListing(l)
	if err != nil {
		t.Fatal(err)
	}
	html := string(p.HTML)
	for _, want := range []string{
		`<h1 class="title">Sharenote</h1>`,
		`<li class="folder"><a href="/@ada/Projects/Sharenote/Note&#43;0">Note 0</a></li>`, // No date, no summary.
		`<li><a href="/@ada/Projects/Sharenote/Note&#43;1">Note 1</a><time datetime="2025-04-02T00:00:00Z">2 Apr 2025</time><p>A summary.</p></li>`,
		`<nav class="pager" aria-label="Pages"><a rel="next" href="/@ada/Projects/Sharenote/?cursor=abc">Next page →</a></nav>`,
		`<meta name="robots" content="noindex">`,
		`<meta property="og:type" content="website">`,
		`color-scheme:dark`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the listing lacks %s", want)
		}
	}
	if strings.Contains(html, "First page") || strings.Contains(html, "og:image") {
		t.Error("the first page links to itself, or a listing has a preview image")
	}
	l.Prev, l.Next, l.Items = "/@ada/Projects/Sharenote/", "", nil
	p, err = page.RenderListing(l)
	if err != nil {
		t.Fatal(err)
	}
	html = string(p.HTML)
	if !strings.Contains(html, `<a href="/@ada/Projects/Sharenote/">← First page</a>`) || strings.Contains(html, "Next page") || !strings.Contains(html, "Nothing here yet.") {
		t.Error("the last, empty page does not link to the first alone")
	}
}

// TestNotePageIsNotASitePage checks that the page at /s/ stays the note alone.
func TestNotePageIsNotASitePage(t *testing.T) {
	p, err := page.Render(siteData(t, typicalNote))
	if err != nil {
		t.Fatal(err)
	}
	html := string(p.HTML)
	if strings.Contains(html, `class="site"`) || strings.Contains(html, "atom+xml") || !strings.Contains(html, "Shared with") {
		t.Error("the note page at /s/ shows a site's navigation or feed")
	}
}
