package notes_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/notes/internal/assets"
)

// cspRecorder runs before any page script and records every Content-Security-Policy
// violation the page reports.
const cspRecorder = `window.__csp = [];
document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.sourceFile + ' ' + (e.sample || '')));`

// diagramState is what the reader sees of a page's diagrams: how many are drawn and how
// many are still text, the luminance (0 dark … 1 light) of the first node's fill and of
// its label, the CSP violations, and the SVG elements that could hold HTML.
const diagramState = `(() => {
  const lum = c => { const m = c.match(/[\d.]+/g); return m ? (0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]) / 255 : -1; };
  const svg = document.querySelector('div.mermaid-diagram > svg');
  const shape = svg && svg.querySelector('g.node rect, g.node path, g.node polygon');
  const label = svg && svg.querySelector('g.node text');
  return {
    drawn: document.querySelectorAll('div.mermaid-diagram > svg').length,
    text: document.querySelectorAll('pre.mermaid').length,
    fill: shape ? lum(getComputedStyle(shape).fill) : -1,
    label: label ? lum(getComputedStyle(label).fill) : -1,
    csp: window.__csp,
    html: document.querySelectorAll('div.mermaid-diagram foreignObject, div.mermaid-diagram img, div.mermaid-diagram iframe').length,
    wide: document.documentElement.scrollWidth - window.innerWidth,
  };
})()`

// TestBrowserDrawsDiagrams loads pages with Mermaid diagrams in Chromium (CSP on): each
// diagram is replaced by an SVG in the page's light or dark theme ("system" following the
// reader's scheme, also when it changes), with no CSP violation and nothing run from the
// hostile sources of the XSS corpus, even when their nodes are clicked; with JavaScript
// off, the diagram's source is shown as readable text.
func TestBrowserDrawsDiagrams(t *testing.T) {
	ctx := browser(t)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspRecorder}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, testkit.SQLiteBackend(t))
	id := f.publish(f.acc, note.Draft{Content: diagramNote + "\n```mermaid\nsequenceDiagram\n  Alice->>Bob: Hello\n  Bob-->>Alice: Hi\n```\n", Title: ptr("Diagrams")})
	var hostile []string
	for _, p := range xssCorpus(t) {
		if strings.HasPrefix(p, "```mermaid") {
			hostile = append(hostile, p)
		}
	}
	attack := f.publish(f.acc, note.Draft{Content: strings.Join(hostile, "\n\n"), Title: ptr("Hostile diagrams")})
	dir := artifactsDir(t)

	for _, c := range []struct {
		theme, scheme string
		dark          bool
	}{{"system", "light", false}, {"system", "dark", true}, {"dark", "light", true}, {"light", "dark", false}} {
		t.Run(c.theme+" page, "+c.scheme+" reader", func(t *testing.T) {
			f.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: f.acc.Token, JSON: map[string]any{"theme": c.theme}}).Expect(t, 200, "")
			scheme(t, ctx, c.scheme)
			// The query (which the service ignores) keeps Chromium from showing the page it
			// cached under the previous theme.
			fired, problems := visit(t, ctx, f.URL+"/s/"+id+"?theme="+c.theme)
			state := evaluate(t, ctx, diagramState)
			screenshot(t, ctx, filepath.Join(dir, fmt.Sprintf("diagrams-%s-%s.png", c.theme, c.scheme)))
			if len(fired) > 0 || len(problems) > 0 || fmt.Sprint(state["csp"]) != "[]" || state["html"] != 0.0 || state["wide"].(float64) > 0 {
				t.Errorf("ran %v, DOM holds %v, state %v", fired, problems, state)
			}
			if state["drawn"] != 2.0 || state["text"] != 0.0 || state["fill"].(float64) < 0 || state["label"].(float64) < 0 ||
				(state["fill"].(float64) < 0.5) != c.dark || (state["label"].(float64) > 0.5) != c.dark {
				t.Errorf("diagrams drawn %v, still text %v; node fill luminance %v, label %v: want the %s theme",
					state["drawn"], state["text"], state["fill"], state["label"], map[bool]string{true: "dark", false: "light"}[c.dark])
			}
			if c.theme != "system" {
				return
			}
			// The reader's scheme changes while the page is open: the diagrams follow it.
			scheme(t, ctx, map[string]string{"light": "dark", "dark": "light"}[c.scheme])
			if !poll(t, ctx, `(() => { const s = document.querySelector('div.mermaid-diagram g.node text');
  return s && (getComputedStyle(s).fill.match(/\d+/g).reduce((a, b) => a + +b, 0) > 384) === `+fmt.Sprint(!c.dark)+`; })()`) {
				t.Error("the diagrams did not follow the reader's new colour scheme")
			}
		})
	}

	t.Run("hostile sources", func(t *testing.T) {
		scheme(t, ctx, "light")
		fired, problems := visit(t, ctx, f.URL+"/s/"+attack)
		state := evaluate(t, ctx, diagramState)
		clicked := evaluate(t, ctx, `(() => { let n = 0; for (const e of document.querySelectorAll('div.mermaid-diagram g.node, div.mermaid-diagram a, div.mermaid-diagram text')) {
  e.dispatchEvent(new MouseEvent('click', {bubbles: true})); n++; } return {n}; })()`)
		after := evaluate(t, ctx, `({fired: window.__xss})`)["fired"]
		// Mermaid's DOMPurify parses each label in an inert document of its own (DOMParser),
		// where Chromium reports an event handler attribute as a violation although nothing
		// could run there (without the CSP, nothing runs either: TestBrowserRunsNoScriptFromNotes).
		// Any other violation is a failure.
		for _, v := range state["csp"].([]any) {
			if !strings.HasPrefix(v.(string), "script-src-attr "+f.URL+assets.DiagramScripts[0]+" ") {
				t.Errorf("CSP violation %q", v)
			}
		}
		if len(fired) > 0 || fmt.Sprint(after) != "[]" || len(problems) > 0 || state["html"] != 0.0 {
			t.Errorf("ran %v (after clicks %v), DOM holds %v, state %v", fired, after, problems, state)
		}
		if state["drawn"] != float64(len(hostile)) || clicked["n"].(float64) == 0 {
			t.Errorf("%v of %d hostile diagrams drawn (the test saw nothing to attack), %v clicked", state["drawn"], len(hostile), clicked["n"])
		}
	})

	t.Run("JavaScript off", func(t *testing.T) {
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 800)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(f.URL+"/s/"+id)); err != nil {
			t.Fatal(err)
		}
		state := evaluate(t, ctx, `(() => { const pre = document.querySelector('pre.mermaid');
  return {text: document.querySelectorAll('pre.mermaid').length, svg: document.querySelectorAll('svg').length, source: pre.textContent,
    shown: pre.checkVisibility(), fits: pre.scrollWidth <= pre.clientWidth, colour: getComputedStyle(pre).color, bg: getComputedStyle(pre).backgroundColor}; })()`)
		screenshot(t, ctx, filepath.Join(dir, "diagrams-no-javascript-360.png"))
		if state["text"] != 2.0 || state["svg"] != 0.0 || !strings.Contains(state["source"].(string), "A[Write] --> B[Publish]") ||
			state["shown"] != true || state["fits"] != true || state["colour"] == state["bg"] {
			t.Errorf("without JavaScript: %v", state)
		}
	})
}

// scheme emulates the reader's prefers-color-scheme.
func scheme(t *testing.T, ctx context.Context, s string) {
	t.Helper()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: s}}}); err != nil {
		t.Fatal(err)
	}
}

// evaluate runs expr in the page and returns its object result.
func evaluate(t *testing.T, ctx context.Context, expr string) map[string]any {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](expr))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// diagramsSettled is true once the page's diagram scripts have drawn every
// <pre class="mermaid">, or when they are not there (a page without diagrams or without
// script).
const diagramsSettled = `document.readyState === 'complete' && (typeof window.mermaid === 'undefined' || !document.querySelector('pre.mermaid'))`

// poll reports whether expr became true in the page within 20 s.
func poll(t *testing.T, ctx context.Context, expr string) bool {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return true
		}
	}
	return false
}
