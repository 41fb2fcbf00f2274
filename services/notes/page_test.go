package notes_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/render/mathml"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/notes/internal/assets"
)

// typical is an ordinary note that uses every Markdown feature the page supports.
const typical = "# A heading\n\nSome *emphasis*, **strong**, ~~struck~~ and `code`, with https://example.com linked.\n\n" +
	"| Left | Right |\n|:-----|------:|\n| a | 1 |\n| b | 2 |\n\n" +
	"- [x] done\n- [ ] todo\n\n" +
	"A claim with a footnote.[^1]\n\n[^1]: The footnote.\n\n" +
	"```go\nfunc main() { fmt.Println(\"hi\") }\n```\n\n" +
	"> [!warning] Mind the gap\n> A callout body.\n\n" +
	"> A plain quote.\n\n## Second heading\n\nMore text.\n"

func pageOf(t *testing.T, f *fixture, id string) (*testkit.Response, string) {
	t.Helper()
	resp := f.get("/s/"+id, "")
	return resp, string(resp.Body)
}

func TestPageRendersEveryFeature(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(f.acc, note.Draft{Content: typical, Title: ptr("Feature tour"), Summary: ptr("Everything at once"),
			Properties: map[string]any{"tags": []any{"go", "web"}, "meta": map[string]any{"lang": "en", "title": "nested"}, "n": 3,
				"title": "Feature tour"}, ShowProperties: true})
		resp, html := pageOf(t, f, id)
		resp.Expect(t, 200, "")
		for name, want := range map[string]string{
			"heading anchor":      `<h1 id="n-a-heading">A heading</h1>`,
			"table":               `<th align="right">Right</th>`,
			"task list":           `<input checked="" disabled="" type="checkbox"`,
			"strikethrough":       `<del>struck</del>`,
			"autolink":            `<a href="https://example.com" rel="nofollow">`,
			"footnote":            `<a href="#n-fn:1" class="footnote-ref"`,
			"highlighted code":    `<span class="hl-kd">func</span>`,
			"callout":             `<div class="callout callout-warning"><p class="callout-title"><svg class="callout-icon"`,
			"callout title":       `</svg>Mind the gap</p>`,
			"title":               `<h1 class="title">Feature tour</h1>`,
			"summary":             `<p class="summary">Everything at once</p>`,
			"author":              `<span class="author">owner</span>`,
			"properties table":    `<table class="properties">`,
			"list as chips":       `<ul class="chips"><li>go</li><li>web</li></ul>`,
			"nested value":        `<dl class="nested"><dt>lang</dt><dd>en</dd><dt>title</dt><dd>nested</dd></dl>`,
			"og:title":            `<meta property="og:title" content="Feature tour">`,
			"og:description":      `<meta property="og:description" content="Everything at once">`,
			"og:image":            `<meta property="og:image" content="` + f.URL + `/api/og/` + id + `.png">`,
			"og:url":              `<meta property="og:url" content="` + f.URL + `/s/` + id + `">`,
			"twitter card":        `<meta name="twitter:card" content="summary_large_image">`,
			"robots meta":         `<meta name="robots" content="noindex">`,
			"published date":      `Published ` + f.clock.Now().UTC().Format("2 Jan 2006"),
			"viewport for phones": `<meta name="viewport" content="width=device-width, initial-scale=1">`,
		} {
			if !strings.Contains(html, want) {
				t.Errorf("%s: page lacks %s", name, want)
			}
		}
		// The title is the heading; the properties table does not repeat it (docs/api.md
		// "The note page").
		if strings.Contains(html, `<th scope="row">title</th>`) {
			t.Error("the properties table repeats the title")
		}
		if len(html) > 30_000 {
			t.Errorf("a typical page is %d bytes, want under 30 KB", len(html))
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("Content-Type = %q", ct)
		}

		t.Run("the CSP allows exactly the page's style and no script", func(t *testing.T) {
			csp := resp.Header.Get("Content-Security-Policy")
			style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(html)
			sum := sha256.Sum256([]byte(style[1]))
			if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe") ||
				!strings.Contains(csp, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
				t.Errorf("CSP %q does not pin the style block", csp)
			}
			if strings.Count(html, "<style>") != 1 || strings.Contains(html, "<script") || strings.Contains(html, " style=") {
				t.Error("the page has a script, an inline style attribute or a second style block")
			}
		})
		t.Run("caching as for the JSON read", func(t *testing.T) {
			etag := resp.Header.Get("ETag")
			if resp.Header.Get("Cache-Control") != "public, max-age=60" || etag == "" || resp.Header.Get("X-Robots-Tag") != "noindex" {
				t.Errorf("headers: %v", resp.Header)
			}
			r := f.Do(t, testkit.Request{Method: "GET", Path: "/s/" + id, Header: map[string]string{"If-None-Match": etag}})
			if r.Status != 304 {
				t.Errorf("If-None-Match gave %d, want 304", r.Status)
			}
		})
		t.Run("a page is rendered once per change", func(t *testing.T) {
			renders := func() string {
				m := regexp.MustCompile(`(?m)^sharenote_page_renders_total (\d+)$`).FindStringSubmatch(string(f.Admin(t, "/metrics").Body))
				return m[1]
			}
			before := renders()
			pageOf(t, f, id)
			pageOf(t, f, id)
			if after := renders(); after != before {
				t.Errorf("two more reads rendered again: %s → %s", before, after)
			}
			f.clock.Advance(time.Second)
			f.patch(id, map[string]any{"summary": "Changed"}).Expect(t, 200, "")
			if _, html := pageOf(t, f, id); !strings.Contains(html, "Changed") {
				t.Error("the page did not change with its note")
			}
			f.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: f.acc.Token, JSON: map[string]any{"theme": "dark"}}).Expect(t, 200, "")
			if _, html := pageOf(t, f, id); !strings.Contains(html, "color-scheme:dark") {
				t.Error("the page did not change with its owner's settings")
			}
		})
	})
}

func TestPageFollowsSettings(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(f.acc, note.Draft{Content: "x", Properties: map[string]any{"secret": "hidden value"}, ShowProperties: false})
		change := func(ch account.SettingsChange) {
			if _, err := f.App.Deps().Settings.Change(context.Background(), f.acc.UserCUID, ch); err != nil {
				t.Fatal(err)
			}
		}
		resp, html := pageOf(t, f, id)
		if resp.Header.Get("X-Robots-Tag") != "noindex" {
			t.Error("a page of a non-indexable owner lacks X-Robots-Tag: noindex")
		}
		if strings.Contains(html, "hidden value") || strings.Contains(html, `class="properties"`) {
			t.Error("properties shown although show_properties is false")
		}
		if !strings.Contains(html, "<title>Untitled note</title>") || !strings.Contains(html, `class="author"`) {
			t.Error("untitled note or author missing")
		}
		change(account.SettingsChange{ShowAuthor: new(false), Indexable: new(true), Theme: new("dark"), AccentColor: new("#ff6600"), Font: new("serif")})
		resp, html = pageOf(t, f, id)
		if strings.Contains(html, `class="author"`) {
			t.Error("author shown although show_author is false")
		}
		for _, want := range []string{"--accent:#ff6600", "Charter", "color-scheme:dark"} {
			if !strings.Contains(html, want) {
				t.Errorf("appearance: page lacks %s", want)
			}
		}
		if resp.Header.Get("X-Robots-Tag") != "" || strings.Contains(html, `content="noindex"`) {
			t.Error("an indexable owner's page says noindex")
		}
	})
}

func TestPage404(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		expiring := f.publish(f.acc, note.Draft{Content: "x", ExpiresAt: ptr(f.clock.Now().Add(time.Minute))})
		gone := f.publish(f.acc, note.Draft{Content: "x"})
		if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), f.acc.UserCUID, gone); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Minute)
		for name, id := range map[string]string{"expired": expiring, "unpublished": gone, "unknown": unknownCUID, "malformed": "x"} {
			resp, html := pageOf(t, f, id)
			if resp.Status != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(html, "Note not found") {
				t.Errorf("%s: %d %s %q", name, resp.Status, resp.Header.Get("Content-Type"), html)
			}
			if len(html) > 8000 {
				t.Errorf("%s: the 404 page is %d bytes", name, len(html))
			}
		}
	})
}

const unknownCUID = "zzzzzzzzzzzzzzzzzzzzzzzz"

// xssCorpus returns the payloads of testdata/xss.md.
func xssCorpus(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/xss.md")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(b), "\n%%%\n")
	if len(parts) < 40 {
		t.Fatalf("the XSS corpus has %d payloads, want at least 40", len(parts))
	}
	return parts
}

// TestPageMarkupCarriesNoScript is the static half of the XSS check: whatever a note holds,
// the parsed page has no scriptable element, no event handler attribute and no scriptable
// URL. (Payload text shown escaped, as text, is harmless and allowed.)
func TestPageMarkupCarriesNoScript(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	for i, payload := range xssCorpus(t) {
		id := f.publish(f.acc, note.Draft{Content: payload, Title: ptr(payload), Summary: ptr(payload),
			Properties: map[string]any{"p": payload}, ShowProperties: true})
		_, page := pageOf(t, f, id)
		if problems := scriptable(page); len(problems) > 0 {
			t.Errorf("payload %d:\n%s\nsurvives into the page: %v", i+1, payload, problems)
		}
	}
}

var forbiddenElements = map[string]bool{"script": true, "object": true, "embed": true, "svg": true,
	"math": true, "base": true, "form": true, "frame": true, "frameset": true, "applet": true,
	"template": true, "noscript": true, "audio": true, "video": true, "source": true, "isindex": true}

// The markup the renderer generates after sanitizing: a callout's icon, an <svg> of
// these shapes first in its title, and formulas of mathml.Elements. SVG or MathML of
// any other shape got past the sanitizer.
var (
	iconShapes     = []string{"path", "circle", "rect"}
	generatedInner = map[string][]string{"svg": iconShapes, "math": mathml.Elements}
)

// diagramScript reports whether tok is one of the page's own diagram scripts: exactly a
// src of assets.DiagramScripts and defer.
func diagramScript(tok html.Token) bool {
	return len(tok.Attr) == 2 && tok.Attr[0].Key == "src" && slices.Contains(assets.DiagramScripts, tok.Attr[0].Val) &&
		tok.Attr[1] == html.Attribute{Key: "defer"}
}

// player is a player's iframe as the renderer generates it: its source rebuilt from a
// video id, and fixed attributes (a width and height of its own).
var player = regexp.MustCompile(`^<iframe class="player" src="(https://www\.youtube-nocookie\.com/embed/[A-Za-z0-9_-]{11}|https://player\.vimeo\.com/video/[0-9]{1,12}\?dnt=1)" title="(YouTube|Vimeo) video" width="[0-9]{1,5}" height="[0-9]{1,6}" ` +
	`sandbox="allow-scripts allow-same-origin allow-presentation allow-popups allow-popups-to-escape-sandbox" allow="encrypted-media; picture-in-picture; fullscreen" allowfullscreen="" referrerpolicy="strict-origin-when-cross-origin" loading="lazy">$`)

func isPlayer(tok html.Token) bool { return player.MatchString(tok.String()) }

// keptStyle reports whether a style attribute holds only the properties a note's HTML
// keeps, with values that call no function but rgb() and hsl() of numbers.
func keptStyle(style string) bool {
	for _, decl := range strings.Split(style, ";") {
		property, value, _ := strings.Cut(decl, ":")
		property, value = strings.TrimSpace(property), strings.ToLower(value)
		if !slices.Contains([]string{"color", "background-color", "text-align", "font-weight", "font-style", "text-decoration"}, property) ||
			!regexp.MustCompile(`^[ a-z0-9#.%,/+-]*((rgba?|hsla?)\([ 0-9.%,/+-]*\))?$`).MatchString(value) {
			return false
		}
	}
	return true
}

// scriptable lists what in page could run script: elements, event handlers, scriptable
// URLs and refresh redirects.
func scriptable(page string) []string {
	var found []string
	z := html.NewTokenizer(strings.NewReader(page))
	styles := 0
	var previous html.Token // the last start tag
	inside := ""            // "svg" or "math" while in generated markup
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return found
		}
		if tt == html.EndTagToken && z.Token().Data == inside {
			inside = ""
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		icon := tok.Data == "svg" && (previous.Data == "p" || previous.Data == "summary") &&
			slices.Contains(previous.Attr, html.Attribute{Key: "class", Val: "callout-title"})
		switch {
		case inside != "":
			if !slices.Contains(generatedInner[inside], tok.Data) {
				found = append(found, "<"+tok.Data+"> in <"+inside+">")
			}
		case icon || tok.Data == "math":
			if tt == html.StartTagToken {
				inside = tok.Data
			}
		case tok.Data == "script" && diagramScript(tok):
		case forbiddenElements[tok.Data]:
			found = append(found, "<"+tok.Data+">")
		case tok.Data == "iframe" && !isPlayer(tok):
			found = append(found, "an iframe other than a player: "+tok.String())
		}
		previous = tok
		if tok.Data == "link" && !slices.Contains(tok.Attr, html.Attribute{Key: "rel", Val: "canonical"}) {
			found = append(found, "<link> other than the canonical URL")
		}
		if tok.Data == "style" {
			if styles++; styles > 1 {
				found = append(found, "a second <style>")
			}
		}
		for _, a := range tok.Attr {
			v := strings.ToLower(strings.Join(strings.Fields(a.Val), ""))
			switch {
			case strings.HasPrefix(a.Key, "on"):
				found = append(found, tok.Data+" "+a.Key)
			case a.Key == "style" && !keptStyle(a.Val):
				found = append(found, tok.Data+" style attribute "+a.Val)
			case a.Key == "http-equiv":
				found = append(found, "meta http-equiv")
			case strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "vbscript:") || strings.HasPrefix(v, "data:text"):
				found = append(found, tok.Data+" "+a.Key+"="+a.Val)
			}
		}
	}
}
