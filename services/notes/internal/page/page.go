package page

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/services/notes/internal/assets"
)

// Data is what a page shows.
type Data struct {
	Title   string // Empty: the page says "Untitled note".
	Summary string // The note's description (note.Text.Description).
	// Author is the owner's name when they show it, else empty.
	Author    string
	Published time.Time
	Updated   time.Time
	// Body is the note's stored HTML, rendered and sanitized by libs/render when the note
	// changed.
	Body       template.HTML
	Properties map[string]any // nil or empty: no properties table.
	Theme      string         // system, light or dark; also <html data-theme>, which the diagram script reads.
	Accent     string         // #rrggbb
	Font       string         // sans, serif or mono.
	URL        string         // The page's public URL.
	ImageURL   string         // The social preview image.
	Noindex    bool
	// BodyClass is the class attribute of the note's body, NoteClasses of its properties
	// (shown or not): "" for none.
	BodyClass string
}

// Page is a rendered page and the Content-Security-Policy that goes with it.
type Page struct {
	HTML []byte
	CSP  string
}

// SiteName names the service on pages and previews.
const SiteName = "sharenote"

// Version identifies the page shell (templates and styles) for the pages' validators: a
// build with another shell serves pages under other ETags.
var Version = func() string {
	sum := sha256.Sum256([]byte(partsTemplate + pageTemplate + siteTemplates + baseCSS + siteCSS + lightCode + darkCode))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}()

// Render builds a note page around its stored HTML: no Markdown is rendered here.
func Render(d Data) (Page, error) {
	n := noteParts(d, "")
	return n.execute("page", struct {
		Head head
		Note noteView
	}{n.head, n.note})
}

// head is what the <head> of every page says.
type head struct {
	Theme   string
	Title   string // og:title; <title> adds the site's name on a site's page.
	Site    string // The site's title on a site's page, else "".
	OGSite  string // og:site_name: the site's title, else SiteName.
	Summary string
	Noindex bool
	Type    string // og:type: article for a note, website for a listing.
	URL     string // The canonical URL, also og:url.
	Image   string // The social preview image; "" for none.
	Feed    string // The site's Atom feed on a site's page, else "".
	CSS     template.CSS
	Scripts []string
}

// noteView is the note as every note page shows it: its header, properties and body.
type noteView struct {
	Data
	DisplayTitle string
	Props        []property
	Tags         []Link // Only on a site's page.
}

// parts are a page before its template runs: its head, its note (on a note's page), and
// the policy that goes with them.
type parts struct {
	head head
	note noteView
	csp  string
}

// noteParts are what a note page and a site's note page share: d's head and note, its
// stylesheet (with layout after the base), and its policy, with the diagram scripts and
// the note's allowances when its body needs them.
func noteParts(d Data, layout string) parts {
	css := stylesheet(d.Theme, d.Accent, d.Font) + layout
	title := d.Title
	if title == "" {
		title = "Untitled note"
	}
	diagrams := render.HasDiagram([]byte(d.Body))
	h := head{Theme: d.Theme, Title: title, OGSite: SiteName, Summary: d.Summary, Noindex: d.Noindex, Type: "article",
		URL: d.URL, Image: d.ImageURL, CSS: template.CSS(css)}
	if diagrams {
		h.Scripts = assets.DiagramScripts
	}
	return parts{
		head: h,
		note: noteView{Data: d, DisplayTitle: title, Props: properties(d.Properties, shown)},
		csp:  policyFor(css, diagrams) + noteAllowances(string(d.Body), diagrams),
	}
}

// execute runs the page template name on view, under p's policy.
func (p parts) execute(name string, view any) (Page, error) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, view); err != nil {
		return Page{}, fmt.Errorf("render %s: %w", name, err)
	}
	return Page{HTML: buf.Bytes(), CSP: p.csp}, nil
}

// policyFor allows exactly the page's one style block (by hash) and images; no script,
// no frames, no forms, no plugins. A page with diagrams also runs the scripts of its own
// origin that draw them, and allows inline styles: Mermaid writes a <style> element into
// each SVG and style attributes onto its shapes, both made by script at run time, so no
// hash can name them (docs/api.md "Diagrams"). A note page adds noteAllowances.
func policyFor(css string, diagrams bool) string {
	sum := sha256.Sum256([]byte(css))
	style := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if diagrams {
		style = "script-src 'self'; style-src 'unsafe-inline'"
	}
	return "default-src 'none'; " + style + "; img-src * data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// NotFound is the small page answered for unknown, expired and unpublished notes.
var NotFound = func() Page {
	css := ":root{--accent:#5b6ee1;--font:" + fonts["sans"] + ";" + lightVars + "color-scheme:light dark}\n" +
		"@media (prefers-color-scheme:dark){:root{" + darkVars + "}}\n" +
		"body{margin:0;background:var(--bg);color:var(--fg);font:1.0625rem/1.65 var(--font)}\n" +
		"main{max-width:44rem;margin:0 auto;padding:2.5rem 1.25rem}\n" +
		".title{font-size:2rem;border-bottom:3px solid var(--accent)}.summary,footer{color:var(--muted)}"
	var buf bytes.Buffer
	if err := notFoundTemplate.Execute(&buf, struct {
		CSS      template.CSS
		SiteName string
	}{template.CSS(css), SiteName}); err != nil {
		panic(err)
	}
	return Page{HTML: buf.Bytes(), CSP: policyFor(css, false)}
}()

// property is one row of the properties table, its value already rendered.
type property struct {
	Key   string
	Value template.HTML
}

// properties are the rows of a properties table, of the keys that show reports true for
// (nil: all): the top-level table leaves out the title and Obsidian's housekeeping keys
// (docs/api.md "The note page").
func properties(m map[string]any, show func(key string) bool) []property {
	keys := make([]string, 0, len(m))
	for k := range m {
		if show == nil || show(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]property, len(keys))
	for i, k := range keys {
		var b strings.Builder
		writeValue(&b, m[k], 0)
		out[i] = property{Key: k, Value: template.HTML(b.String())}
	}
	return out
}

// writeValue renders a property value readably and escaped: lists as chips, objects as
// nested definition lists, scalars as text.
func writeValue(b *strings.Builder, v any, depth int) {
	switch x := v.(type) {
	case nil:
		b.WriteString(`<span class="muted">—</span>`)
	case string:
		b.WriteString(template.HTMLEscapeString(x))
	case []any:
		if depth > 8 {
			b.WriteString("…")
			return
		}
		b.WriteString(`<ul class="chips">`)
		for _, e := range x {
			b.WriteString("<li>")
			writeValue(b, e, depth+1)
			b.WriteString("</li>")
		}
		b.WriteString("</ul>")
	case map[string]any:
		if depth > 8 {
			b.WriteString("…")
			return
		}
		b.WriteString(`<dl class="nested">`)
		for _, p := range properties(x, nil) {
			b.WriteString("<dt>" + template.HTMLEscapeString(p.Key) + "</dt><dd>")
			writeValue(b, x[p.Key], depth+1)
			b.WriteString("</dd>")
		}
		b.WriteString("</dl>")
	default:
		b.WriteString(template.HTMLEscapeString(fmt.Sprint(x)))
	}
}

var funcs = template.FuncMap{
	"date": func(t time.Time) string { return t.UTC().Format("2 Jan 2006") },
	"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
}

// templates are the pages, one set: the parts that every page shares (head, note, nav,
// footer) and the pages made of them (page, sitenote, listing).
var templates = template.Must(template.New("").Funcs(funcs).Parse(partsTemplate + pageTemplate + siteTemplates))

// partsTemplate is the parts of the pages. Of the X (Twitter) card tags the head writes
// only twitter:card: X reads the title, description and image from the Open Graph tags
// when its own are absent, so writing both would only say the same thing twice.
const partsTemplate = `{{define "head"}}<!doctype html>
<html lang="en" data-theme="{{.Theme}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}{{with .Site}} · {{.}}{{end}}</title>
{{- if .Summary}}
<meta name="description" content="{{.Summary}}">{{end}}
{{- if .Noindex}}
<meta name="robots" content="noindex">{{end}}
<meta property="og:type" content="{{.Type}}">
<meta property="og:site_name" content="{{.OGSite}}">
<meta property="og:title" content="{{.Title}}">
{{- if .Summary}}
<meta property="og:description" content="{{.Summary}}">{{end}}
<meta property="og:url" content="{{.URL}}">
{{- with .Image}}
<meta property="og:image" content="{{.}}">
<meta property="og:image:width" content="1200">
<meta property="og:image:height" content="630">
<meta name="twitter:card" content="summary_large_image">
{{- else}}
<meta name="twitter:card" content="summary">
{{- end}}
<link rel="canonical" href="{{.URL}}">
{{- with .Feed}}
<link rel="alternate" type="application/atom+xml" title="{{$.Site}}" href="{{.}}">
{{- end}}
<style>{{.CSS}}</style>
{{- range .Scripts}}
<script src="{{.}}" defer></script>
{{- end}}
</head>
{{- end}}

{{define "note"}}<header>
<h1 class="title">{{.DisplayTitle}}</h1>
{{- if .Summary}}
<p class="summary">{{.Summary}}</p>{{end}}
<p class="meta">
{{- if .Author}}<span class="author">{{.Author}}</span> · {{end -}}
<time datetime="{{iso .Published}}">Published {{date .Published}}</time>
{{- if ne (iso .Updated) (iso .Published)}} · <time datetime="{{iso .Updated}}">Updated {{date .Updated}}</time>{{end}}
</p>
{{- with .Tags}}
<ul class="tags">
{{- range .}}<li><a class="tag" href="{{.URL}}">#{{.Text}}</a></li>{{end -}}
</ul>
{{- end}}
</header>
{{- if .Props}}
<table class="properties">
<tbody>
{{- range .Props}}
<tr><th scope="row">{{.Key}}</th><td>{{.Value}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}
<article{{with .BodyClass}} class="{{.}}"{{end}}>
{{.Body}}
</article>
{{- end}}`

// pageTemplate is the note page at /s/.
const pageTemplate = `{{define "page"}}{{template "head" .Head}}
<body>
<main>
{{template "note" .Note}}
<footer>Shared with <a href="{{.Head.URL}}">{{.Head.OGSite}}</a></footer>
</main>
</body>
</html>
{{end}}`

var notFoundTemplate = template.Must(template.New("404").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Note not found</title>
<style>{{.CSS}}</style>
</head>
<body>
<main>
<h1 class="title">Note not found</h1>
<p class="summary">This note does not exist, has expired, or is no longer shared.</p>
<footer>{{.SiteName}}</footer>
</main>
</body>
</html>
`))

// fonts are the font stacks of the three font settings: system fonts only, so the page
// loads nothing.
var fonts = map[string]string{
	"sans":  `system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif`,
	"serif": `Charter, "Bitstream Charter", "Sitka Text", Cambria, Georgia, serif`,
	"mono":  `ui-monospace, "Cascadia Code", "Source Code Pro", Menlo, Consolas, monospace`,
}

const (
	lightVars = `--bg:#ffffff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;`
	darkVars  = `--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--soft:#151b23;`
)

// baseCSS is the page's layout: a readable measure, responsive down to 360 px phones.
const baseCSS = `*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:1.0625rem/1.65 var(--font);overflow-wrap:break-word}
main{max-width:44rem;margin:0 auto;padding:2.5rem 1.25rem 3rem}
@media (max-width:480px){main{padding:1.25rem 1rem 2rem}body{font-size:1rem}}
a{color:var(--accent)}
.title{font-size:2.1rem;line-height:1.2;margin:0 0 .5rem;border-bottom:3px solid var(--accent);padding-bottom:.4rem}
@media (max-width:480px){.title{font-size:1.6rem}}
.summary{font-size:1.15rem;color:var(--muted);margin:.25rem 0 .5rem}
.meta{color:var(--muted);font-size:.9rem;margin:0 0 1.5rem}
.muted{color:var(--muted)}
table{border-collapse:collapse;display:block;overflow-x:auto;max-width:100%;margin:1rem 0}
th,td{border:1px solid var(--line);padding:.35rem .7rem;vertical-align:top}
th:not([align]),td:not([align]){text-align:left}
table.properties{font-size:.92rem}table.properties th,table.properties td{background:var(--soft)}
table.properties th{font-weight:600;white-space:nowrap;color:var(--muted)}
.chips{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.3rem}
.chips li{border:1px solid var(--line);border-radius:1rem;padding:0 .55rem;background:var(--bg)}
dl.nested{margin:0;display:grid;grid-template-columns:auto 1fr;gap:.1rem .6rem}
dl.nested dt{color:var(--muted)}dl.nested dd{margin:0}
img{max-width:100%;height:auto}
pre{overflow-x:auto;padding:.8rem 1rem;border-radius:6px;background:var(--soft);border:1px solid var(--line);font-size:.9rem;line-height:1.45}
code{font-family:ui-monospace,"Cascadia Code",Menlo,Consolas,monospace;font-size:.92em}
:not(pre)>code{background:var(--soft);padding:.1em .3em;border-radius:4px}
blockquote{margin:1rem 0;padding:0 1rem;border-left:4px solid var(--line);color:var(--muted)}
hr{border:0;border-top:1px solid var(--line)}
li:has(>input[type=checkbox]){list-style:none;margin-left:-1.2rem}
li.is-checked{color:var(--muted);text-decoration:line-through}
li.is-checked>:is(ul,ol){display:inline-block;width:100%;color:var(--fg)}
.callout{--kind:var(--accent);border-left:4px solid var(--kind);background:var(--soft);border-radius:6px;padding:.2rem 1rem;margin:1rem 0}
.callout-title{font-weight:700;margin:.5rem 0}
summary.callout-title{cursor:pointer}
mark{background:color-mix(in srgb,var(--accent) 30%,transparent);color:inherit;border-radius:3px;padding:0 .15em}
.tag{display:inline-block;background:var(--soft);border:1px solid var(--line);border-radius:999px;padding:0 .5em;font-size:.88em;color:var(--accent)}
.callout-warning,.callout-caution,.callout-attention{--kind:#d29922}
.callout-danger,.callout-error,.callout-bug,.callout-failure{--kind:#e5534b}
.callout-tip,.callout-success,.callout-check,.callout-done{--kind:#3fb950}
.callout-icon{vertical-align:-.2em;margin-right:.4rem;color:var(--kind)}
math{font-size:1.1em}.math-block{overflow-x:auto;margin:1rem 0}
.player{display:block;max-width:100%;height:auto;aspect-ratio:16/9;border:0;margin:1rem 0;background:var(--soft);border-radius:6px}
kbd{font-family:ui-monospace,"Cascadia Code",Menlo,Consolas,monospace;font-size:.85em;border:1px solid var(--line);border-bottom-width:2px;border-radius:4px;padding:0 .3em;background:var(--soft)}
.wikilink.unresolved{color:var(--muted);border-bottom:1px dashed var(--line)}
.embed{border-left:3px solid var(--line);padding:0 0 0 1rem;margin:1rem 0}
.embed-title{font-size:.85rem;margin:.25rem 0;color:var(--muted)}
.embed-content>:first-child{margin-top:.3rem}.embed-content h1{font-size:1.5em}
.footnotes{font-size:.9rem;color:var(--muted)}
pre.mermaid{white-space:pre-wrap}.mermaid-diagram{margin:1rem 0;overflow-x:auto}.mermaid-diagram>svg{display:block;margin:0 auto;max-width:100%;height:auto}
footer{margin-top:3rem;color:var(--muted);font-size:.85rem}
`

// codeCSS is the highlighter's stylesheet for a chroma style, scoped by class prefix.
func codeCSS(name string) string {
	var b strings.Builder
	f := chromahtml.New(chromahtml.WithClasses(true), chromahtml.ClassPrefix(render.CodeClassPrefix))
	style := styles.Get(name)
	if err := f.WriteCSS(&b, style); err != nil {
		panic(err)
	}
	return minify(b.String(), style)
}

// minify drops the comments and line breaks chroma writes and its background rule (the
// page's own pre style applies).
func minify(css string, _ *chroma.Style) string {
	var out strings.Builder
	for _, line := range strings.Split(css, "\n") {
		if i := strings.Index(line, "*/"); strings.HasPrefix(line, "/*") && i >= 0 {
			line = line[i+2:]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.Contains(line, "."+render.CodeClassPrefix+"bg ") || strings.HasPrefix(line, ".bg ") {
			continue
		}
		out.WriteString(line)
	}
	return compact.Replace(out.String())
}

// compact removes the spaces chroma writes around CSS punctuation.
var compact = strings.NewReplacer(" { ", "{", "{ ", "{", " }", "}", "; ", ";", ": ", ":", ";}", "}")

var (
	lightCode = codeCSS("github")
	// The reset lets the dark rules start from the text colour rather than inherit the
	// light ones (system theme carries both).
	darkCode = ".hl-chroma [class]{color:inherit;background-color:transparent;font-weight:inherit;font-style:inherit}" + codeCSS("github-dark")
)

// stylesheet assembles the page's one style block for the owner's appearance: "system"
// follows the reader's prefers-color-scheme.
func stylesheet(theme, accent, font string) string {
	stack, ok := fonts[font]
	if !ok {
		stack = fonts["sans"]
	}
	root := ":root{--accent:" + accent + ";--font:" + stack + ";"
	var b strings.Builder
	switch theme {
	case "dark":
		b.WriteString(root + darkVars + "color-scheme:dark}\n" + baseCSS + darkCode)
	case "light":
		b.WriteString(root + lightVars + "color-scheme:light}\n" + baseCSS + lightCode)
	default:
		b.WriteString(root + lightVars + "color-scheme:light dark}\n" + baseCSS + lightCode)
		b.WriteString("@media (prefers-color-scheme:dark){:root{" + darkVars + "}" + darkCode + "}")
	}
	return b.String()
}
