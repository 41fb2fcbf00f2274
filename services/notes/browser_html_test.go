package notes_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// TestBrowserShowsRawHTMLAndPlayers loads the pages of libs/render's fixtures of raw
// HTML and of players (CSP on) and checks what Chromium shows: the HTML's text, its
// kept styles applied (the policy's hashes work), nothing of what is dropped, and the
// players with their fixed attributes, allowed by the policy (no violation; their
// hosts do not resolve here, so nothing leaves loopback).
func TestBrowserShowsRawHTMLAndPlayers(t *testing.T) {
	ctx := browser(t)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspRecorder}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, testkit.SQLiteBackend(t))
	fixture := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "libs", "render", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return f.publish(f.acc, note.Draft{Content: string(b)})
	}
	raw, players := fixture("raw-html.md"), fixture("players.md")
	dir := artifactsDir(t)

	check := func(id, shot, js string) map[string]any {
		t.Helper()
		fired, problems := visit(t, ctx, f.URL+"/s/"+id)
		violations, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__csp`))
		if err != nil {
			t.Fatal(err)
		}
		if len(fired) > 0 || len(problems) > 0 || len(violations) > 0 {
			t.Errorf("%s: ran %v, DOM holds %v, CSP violations %v", shot, fired, problems, violations)
		}
		screenshot(t, ctx, filepath.Join(dir, shot+".png"))
		state, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](js))
		if err != nil {
			t.Fatal(err)
		}
		return state
	}

	state := check(raw, "raw-html", `(() => {
  const a = document.querySelector('article');
  const span = [...a.querySelectorAll('span')].find(s => s.textContent === 'red and bold');
  const p = [...a.querySelectorAll('p')].find(s => s.textContent === 'A centred paragraph.');
  return {
    headings: [...a.querySelectorAll('h1,h2,h3,h4,h5,h6')].map(h => h.localName + ':' + h.textContent + ':' + h.id).join('|'),
    div: a.querySelector('div')?.textContent,
    br: a.innerText.includes('Matches any file in the vault.\nExample: file:.jpg'),
    color: span && getComputedStyle(span).color, weight: span && getComputedStyle(span).fontWeight,
    position: span && getComputedStyle(span).position,
    align: p && getComputedStyle(p).textAlign, background: p && getComputedStyle(p).backgroundColor,
    details: a.querySelector('details > summary')?.textContent + '/' + a.querySelector('details p strong')?.textContent,
    dropped: ['alert', 'p{}', 'textarea content', 'an option', 'SVG text', 'a comment'].filter(s => a.textContent.includes(s)).join('|'),
    outside: document.querySelector('main > footer')?.previousElementSibling?.localName,
  };
})()`)
	want := map[string]any{
		"headings": "h1:Raw HTML:n-raw-html|h1:Heading 1:|h2:Heading 2:|h3:Heading 3:|h4:Heading 4:|h5:Heading 5:|h6:Heading 6, whose id is dropped:",
		"div":      "This **will not** be bold.", "br": true, "color": "rgb(221, 0, 0)", "weight": "700", "position": "static",
		"align": "center", "background": "rgb(255, 255, 200)", "details": "A summary/inside", "dropped": "", "outside": "article",
	}
	for k, v := range want {
		if state[k] != v {
			t.Errorf("raw HTML page: %s = %v, want %v", k, state[k], v)
		}
	}

	state = check(players, "players", `(() => {
  const a = document.querySelector('article');
  const frames = [...a.querySelectorAll('iframe')];
  return {
    players: frames.map(f => f.src + ' ' + f.width + 'x' + f.height).join('|'),
    fixed: frames.every(f => f.getAttribute('sandbox') === 'allow-scripts allow-same-origin allow-presentation allow-popups allow-popups-to-escape-sandbox' &&
      f.getAttribute('allow') === 'encrypted-media; picture-in-picture; fullscreen' && f.referrerPolicy === 'strict-origin-when-cross-origin' &&
      f.loading === 'lazy' && f.attributes.length === 10),
    fits: frames.every(f => f.getBoundingClientRect().right <= window.innerWidth),
    links: [...a.querySelectorAll('a')].map(l => l.textContent).join('|'),
    images: a.querySelectorAll('img').length,
  };
})()`)
	yt, vimeo := "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ", "https://player.vimeo.com/video/76979871?dnt=1"
	want = map[string]any{
		"players": yt + " 560x315|" + yt + " 560x315|" + yt + " 560x315|" + yt + " 640x360|" + vimeo + " 400x225|" + yt + " 560x315",
		"fixed":   true, "fits": true, "images": 2.0,
		"links": "https://maps.example/embed?pb=1|A post|https://example.com/|https://example.com/paper.pdf",
	}
	for k, v := range want {
		if state[k] != v {
			t.Errorf("players page: %s = %v, want %v", k, state[k], v)
		}
	}

	// On a phone, the players shrink to the screen and keep their shape.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 800)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{raw, players} {
		visit(t, ctx, f.URL+"/s/"+id)
		state, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`({
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  shapes: [...document.querySelectorAll('iframe')].every(f => { const r = f.getBoundingClientRect(); return r.right <= window.innerWidth && Math.abs(r.width / r.height - 16 / 9) < 0.05; }),
})`))
		if err != nil {
			t.Fatal(err)
		}
		if state["overflow"].(float64) > 0 || state["shapes"] != true {
			t.Errorf("at 360 px: %v", state)
		}
	}
	screenshot(t, ctx, filepath.Join(dir, "players-360.png"))
}
