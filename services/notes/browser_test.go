package notes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/notes/internal/assets"
	notepage "github.com/sharenote/sharenote/services/notes/internal/page"
)

// detector runs before any page script: it records every alert, confirm, prompt and
// console call, which is how the corpus's payloads would announce themselves.
const detector = `window.__xss = [];
for (const k of ['alert', 'confirm', 'prompt']) window[k] = (...a) => { window.__xss.push(k + ':' + a.join(',')); };
for (const k of ['log', 'info', 'warn', 'error', 'debug']) { const o = console[k]; console[k] = (...a) => { window.__xss.push('console.' + k + ':' + a.join(',')); }; }`

// domProblems lists elements and attributes that could carry script in the live DOM.
// SVG, MathML and iframes are problems unless they are the renderer's own
// (generatedInner): a callout's icon, formulas and players. MathML smuggled past a
// sanitizer (the <math><mtext><table><mglyph><style> family) holds HTML elements.
var domProblems = func() string {
	inner, err := json.Marshal(generatedInner)
	if err != nil {
		panic(err)
	}
	scripts, err := json.Marshal(assets.DiagramScripts)
	if err != nil {
		panic(err)
	}
	return `(() => {
  const out = [];
  const inner = ` + string(inner) + `;
  const scripts = ` + string(scripts) + `;
  const player = e => e.localName === 'iframe' && e.matches('iframe.player') && !e.hasAttribute('srcdoc') && !e.hasAttribute('onload') &&
    /^https:\/\/(www\.youtube-nocookie\.com\/embed\/[A-Za-z0-9_-]{11}|player\.vimeo\.com\/video\/[0-9]{1,12}\?dnt=1)$/.test(e.getAttribute('src')) &&
    e.getAttribute('sandbox') === 'allow-scripts allow-same-origin allow-presentation allow-popups allow-popups-to-escape-sandbox';
  const ours = e => player(e) || (e.localName === 'math' || e.matches('.callout-title > svg.callout-icon:first-child')) &&
    [...e.querySelectorAll('*')].every(c => inner[e.localName].includes(c.localName) && c.namespaceURI === e.namespaceURI) ||
    // The page's own diagram scripts, and the SVG they draw (whose elements are checked too).
    e.localName === 'script' && e.parentElement === document.head && scripts.includes(e.getAttribute('src')) ||
    e.localName === 'svg' && !!e.closest('div.mermaid-diagram');
  for (const e of document.querySelectorAll('script,iframe,object,embed,svg,math,form,base,frame,template,noscript,video,audio,foreignObject')) {
    if (!ours(e)) out.push('<' + e.localName + '>');
  }
  for (const e of document.querySelectorAll('*')) for (const a of e.attributes) {
    const v = a.value.replace(/\s+/g, '').toLowerCase();
    if (a.name.startsWith('on')) out.push(e.localName + ' ' + a.name);
    if (/^(javascript|vbscript|data:text)/.test(v)) out.push(e.localName + ' ' + a.name + '=' + a.value);
  }
  return out;
})()`
}()

// browser starts Debian's Chromium headless with the flags this environment needs, or
// skips when no Chromium is installed (.ci/run installs it).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no Chromium on this machine: apt-get install chromium")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless,
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: detector}); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	// A dialog would block the page; accept any at once (the detector has recorded it).
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return ctx
}

// visit loads url, lets late handlers (image errors, autofocus) fire and the page's
// diagrams be drawn, and returns what the detector recorded and what the DOM holds that
// could run script.
func visit(t *testing.T, ctx context.Context, url string) (fired, problems []string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate %s: %v", url, err)
	}
	time.Sleep(100 * time.Millisecond)
	poll(t, ctx, diagramsSettled) // A diagram that Mermaid cannot draw stays text: the wait ends without failing.
	fired, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__xss`))
	if err != nil {
		t.Fatal(err)
	}
	problems, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](domProblems))
	if err != nil {
		t.Fatal(err)
	}
	return fired, problems
}

// TestBrowserRunsNoScriptFromNotes renders each payload of the corpus (as body, title,
// summary, author and property) into a page served WITHOUT the Content-Security-Policy,
// so that the sanitiser and the template alone must stop it, and checks in Chromium that
// nothing ran. The harness serves the diagram scripts too, so that Mermaid's strict mode
// alone must stop the hostile diagrams. A positive control proves the detector sees
// script that does run.
func TestBrowserRunsNoScriptFromNotes(t *testing.T) {
	ctx := browser(t)
	corpus := xssCorpus(t)
	pages := gin.New()
	pages.GET(routes.Asset.Path, assets.Serve)
	pages.NoRoute(gin.WrapF(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/control" {
			_, _ = w.Write([]byte(`<!doctype html><img src="missing" onerror="alert('control')"><script>console.log('control')</script>`))
			return
		}
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/raw/"))
		if err != nil || i < 0 || i >= len(corpus) {
			http.NotFound(w, r)
			return
		}
		p := corpus[i]
		body, err := render.Markdown(r.Context(), p, render.Options{})
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		pg, err := notepage.Render(notepage.Data{Title: p, Summary: p, Author: p, Body: template.HTML(body.HTML), Properties: map[string]any{p: p, "list": []any{p}},
			Theme: "system", Accent: "#5b6ee1", Font: "sans", URL: "http://example.invalid/s/x", ImageURL: "http://example.invalid/og.png"})
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		_, _ = w.Write(pg.HTML) // Deliberately no CSP.
	}))
	harness := httptest.NewServer(pages)
	t.Cleanup(harness.Close)

	fired, _ := visit(t, ctx, harness.URL+"/control")
	if !strings.Contains(strings.Join(fired, " "), "alert:control") || !strings.Contains(strings.Join(fired, " "), "console.log:control") {
		t.Fatalf("the detector missed the control's script (recorded %v): the test could not see an attack", fired)
	}
	for i, p := range corpus {
		fired, problems := visit(t, ctx, fmt.Sprintf("%s/raw/%d", harness.URL, i))
		if len(fired) > 0 || len(problems) > 0 {
			t.Errorf("payload %d %q: ran %v, DOM holds %v", i+1, p, fired, problems)
		}
	}
}

// screenshot saves the whole page as a PNG at path.
func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // Quality 100 is a PNG.
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkObsidianConstructs checks the page of libs/render/testdata/obsidian.md that the
// browser shows: each construct as Obsidian shows it, and no raw delimiters outside code.
func checkObsidianConstructs(t *testing.T, ctx context.Context, pageURL, linkedURL string, width int64) {
	t.Helper()
	state, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`(() => {
  const main = document.querySelector('main');
  const text = main.cloneNode(true);
  text.querySelectorAll('pre, code').forEach(e => e.remove());
  const inline = [...main.querySelectorAll('p > math:not([display])')];
  return {
    math: main.querySelectorAll('math').length,
    inlineMath: inline.length,
    displayMath: main.querySelectorAll('.math-block > math[display=block], p > math[display=block]').length,
    mathShown: inline.every(m => m.getBoundingClientRect().width > 0),
    mathWide: Math.max(...[...main.querySelectorAll('math')].map(m => m.getBoundingClientRect().right)) <= window.innerWidth,
    mark: [...main.querySelectorAll('mark')].map(e => e.textContent).join('|'),
    tags: [...main.querySelectorAll('.tag')].map(e => e.textContent).join(' '),
    icons: [...main.querySelectorAll('.callout')].every(c => c.querySelector('.callout-title > svg.callout-icon')),
    folded: document.querySelector('details.callout-warning')?.open,
    unfolded: document.querySelector('details.callout-tip')?.open,
    titleMarkdown: document.querySelector('details.callout-tip > summary.callout-title > strong')?.textContent,
    hiddenShown: document.querySelector('details.callout-warning p')?.checkVisibility(),
    links: [...main.querySelectorAll('a.wikilink')].map(a => a.href + ' ' + a.textContent),
    unresolved: [...main.querySelectorAll('.wikilink.unresolved')].map(e => e.textContent).join('|'),
    mermaid: !!main.querySelector('div.mermaid-diagram > svg') && !main.querySelector('pre.mermaid'),
    tasks: main.querySelectorAll('input[type=checkbox]').length,
    footnote: !!main.querySelector('a.footnote-ref') && !!main.querySelector('.footnotes li'),
    table: main.querySelectorAll('table td').length,
    anchors: !!main.querySelector('h2#n-links-between-notes'),
    delimiters: (text.textContent.match(/\$\$|==|\[\[|%%|\$[a-z\\]/g) || []).join(' '),
    comments: main.textContent.includes('comment,') || main.textContent.includes('inline one'),
    lineBreak: !![...main.querySelectorAll('p')].find(p => p.textContent.startsWith('Two lines'))?.querySelector('br'),
    inlineFootnote: [...main.querySelectorAll('.footnotes li')].some(li => li.textContent.includes('An inline footnote')),
    customTasks: [...main.querySelectorAll('li[data-task]')].map(li => li.dataset.task + (li.querySelector('input').checked ? '+' : '-')).join(' '),
    htmlHeading: [...main.querySelectorAll('h3')].some(h => h.textContent === 'A heading written in HTML'),
    div: [...main.querySelectorAll('div')].find(d => d.textContent.startsWith('This **will not** be bold')),
    brWords: main.innerText.includes('vault.Example'),
    scriptText: main.textContent.includes('script text') || main.textContent.includes('display: none'),
    players: [...main.querySelectorAll('iframe')].map(f => f.getAttribute('src')).join(' '),
    widgetLink: !!main.querySelector('a[href="https://example.com/widget"]'),
    image: main.querySelector('img[alt="A plot"]')?.getAttribute('width'),
    embeds: [...main.querySelectorAll('.embed')].map(e => e.querySelector('.embed-title').textContent + ': ' +
      e.querySelector('.embed-content').textContent.trim().replace(/\s+/g, ' ')),
    properties: [...document.querySelectorAll('table.properties th')].map(th => th.textContent).join(' '),
    bodyClass: document.querySelector('article')?.className,
    description: document.querySelector('meta[name=description]')?.content,
  };
})()`))
	if err != nil {
		t.Fatal(err)
	}
	// The link to a heading of another note leads to its page: its anchor there comes when
	// the page's builder resolves fragments (render.Outline.Anchor); links within the note
	// lead to their anchors. The Markdown link names a path no publication has.
	wantLinks := []any{linkedURL + " Linked note", linkedURL + " the same note under another name", linkedURL + "#n-details Linked note > Details",
		pageURL + "#n-callouts Callouts", pageURL + "#%5Equote the quote",
		// The embeds' frames: each title leads to what it embeds.
		linkedURL + " Linked note", linkedURL + "#n-details Linked note", linkedURL + "#%5Efact Linked note"}
	if state["math"] != 4.0 || state["inlineMath"] != 2.0 || state["displayMath"] != 2.0 || state["mathShown"] != true || state["mathWide"] != true ||
		state["mark"] != "Highlighted words|a highlight|open" || state["tags"] != "#tags #nested/tags" || state["icons"] != true ||
		state["folded"] != false || state["unfolded"] != true || state["titleMarkdown"] != "foldable" || state["hiddenShown"] != false ||
		fmt.Sprint(state["links"]) != fmt.Sprint(wantLinks) || state["unresolved"] != "A note that does not exist|the note|Nowhere" ||
		state["mermaid"] != true || state["tasks"] != 4.0 || state["footnote"] != true || state["table"] != 5.0 || state["anchors"] != true ||
		state["delimiters"] != "" || state["comments"] != false {
		t.Errorf("Obsidian constructs at %d px: %v", width, state)
	}
	checkReadingView(t, state, width)
}

// checkReadingView checks, in state (see checkObsidianConstructs), what the fixture's
// "Reading view" section and the note's properties show as Obsidian's reading view does.
func checkReadingView(t *testing.T, state map[string]any, width int64) {
	t.Helper()
	div, _ := state["div"].(map[string]any)
	wantEmbeds := []any{"Linked note: Linked. Details The details, embedded. A fact worth embedding.",
		"Linked note: Details The details, embedded. A fact worth embedding.", "Linked note: A fact worth embedding."}
	if state["lineBreak"] != true || state["inlineFootnote"] != true || state["customTasks"] != "x+ ?+ -+" ||
		state["htmlHeading"] != true || div == nil || state["brWords"] != false || state["scriptText"] != false ||
		state["players"] != "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" || state["widgetLink"] != true || state["image"] != "300" ||
		fmt.Sprint(state["embeds"]) != fmt.Sprint(wantEmbeds) || state["properties"] != "status" ||
		state["bodyClass"] != "cssclass-wide" || state["description"] != "Every construct, as Obsidian shows it." {
		t.Errorf("Obsidian's reading view at %d px: %v", width, state)
	}
}

func artifactsDir(t *testing.T) string {
	dir := os.Getenv("SHARE_ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "artifacts")
	}
	dir = filepath.Join(dir, "browser")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowserShowsTheNotePage loads real pages (CSP on) in light and dark mode at desktop
// and phone widths, saves screenshots, and checks what a reader sees.
func TestBrowserShowsTheNotePage(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, testkit.SQLiteBackend(t))
	long := "```\n" + strings.Repeat("a_very_long_unbroken_identifier_", 12) + "\n```\n\nA-very-long-word-" + strings.Repeat("x", 120) + "\n"
	id := f.publish(f.acc, note.Draft{Content: typical + long, Title: ptr("A note from sharenote"), Summary: ptr("What readers see"),
		Properties: map[string]any{"tags": []any{"go", "web", "notes"}, "status": "draft", "meta": map[string]any{"lang": "en"}}, ShowProperties: true})
	attack := f.publish(f.acc, note.Draft{Content: strings.Join(xssCorpus(t), "\n\n"), Title: ptr("<script>alert('title')</script>")})
	// The fixture of every Obsidian construct, and the note its wikilinks name.
	linked := f.publish(f.acc, note.Draft{Content: "Linked.\n\n## Details\n\nThe details, embedded.\n\nA fact worth embedding. ^fact\n",
		Title: ptr("Linked note")})
	fixture, err := os.ReadFile(filepath.Join("..", "..", "libs", "render", "testdata", "obsidian.md"))
	if err != nil {
		t.Fatal(err)
	}
	// With Obsidian Publish's housekeeping keys, which the properties table leaves out.
	obsidian := f.publish(f.acc, note.Draft{Content: string(fixture), ShowProperties: true, Properties: map[string]any{
		"status": "draft", "publish": true, "permalink": "every", "aliases": []any{"All"}, "cssclasses": []any{"wide"},
		"description": "Every construct, as Obsidian shows it."}})
	dir := artifactsDir(t)

	for _, scheme := range []string{"light", "dark"} {
		for _, width := range []int64{1280, 360} {
			t.Run(fmt.Sprintf("%s %dpx", scheme, width), func(t *testing.T) {
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
					t.Fatal(err)
				}
				if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
					t.Fatal(err)
				}
				fired, problems := visit(t, ctx, f.URL+"/s/"+id)
				if len(fired) > 0 || len(problems) > 0 {
					t.Errorf("ordinary page: ran %v, DOM holds %v", fired, problems)
				}
				screenshot(t, ctx, filepath.Join(dir, fmt.Sprintf("page-%s-%d.png", scheme, width)))
				state, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`({
  bg: getComputedStyle(document.body).backgroundColor,
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  heading: !!document.querySelector('h1#n-a-heading'),
  table: !!document.querySelector('table.properties'),
  callout: document.querySelector('.callout-title')?.textContent,
  code: getComputedStyle(document.querySelector('.hl-kd')).color !== getComputedStyle(document.body).color,
  checkbox: document.querySelectorAll('input[type=checkbox]').length,
})`))
				if err != nil {
					t.Fatal(err)
				}
				wantBG := map[string]string{"light": "rgb(255, 255, 255)", "dark": "rgb(13, 17, 23)"}[scheme]
				if state["bg"] != wantBG {
					t.Errorf("background %v, want %s: the theme (or the CSP-pinned style) did not apply", state["bg"], wantBG)
				}
				if state["overflow"].(float64) > 0 {
					t.Errorf("the page is %v px wider than a %d px screen", state["overflow"], width)
				}
				if state["heading"] != true || state["table"] != true || state["callout"] != "Mind the gap" || state["code"] != true || state["checkbox"].(float64) != 2 {
					t.Errorf("rendered page state: %v", state)
				}
				fired, problems = visit(t, ctx, f.URL+"/s/"+obsidian)
				if len(fired) > 0 || len(problems) > 0 {
					t.Errorf("Obsidian page: ran %v, DOM holds %v", fired, problems)
				}
				screenshot(t, ctx, filepath.Join(dir, fmt.Sprintf("obsidian-%s-%d.png", scheme, width)))
				checkObsidianConstructs(t, ctx, f.URL+"/s/"+obsidian, f.URL+"/s/"+linked, width)
				fired, problems = visit(t, ctx, f.URL+"/s/"+attack)
				if len(fired) > 0 || len(problems) > 0 {
					t.Errorf("attack page: ran %v, DOM holds %v", fired, problems)
				}
			})
		}
	}
}
