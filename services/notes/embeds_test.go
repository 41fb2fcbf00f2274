package notes_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// TestEmbeddedPayloadsCarryNoScript is the static XSS check of embeds: each payload of
// the corpus, as the title and the content of a note embedded whole, by a heading and by
// a block, leaves no scriptable markup in the embedding page, and its title is text.
func TestEmbeddedPayloadsCarryNoScript(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	for i, payload := range xssCorpus(t) {
		path := fmt.Sprintf("Payload %d.md", i)
		f.publish(f.acc, note.Draft{Content: payload + "\n\n## Part\n\n" + payload + "\n\nblock ^b\n", Title: ptr(payload), Path: &path})
		page := f.publish(f.acc, note.Draft{Content: fmt.Sprintf("![[Payload %d]]\n\n![[Payload %d#Part]]\n\n![[Payload %d#^b]]\n", i, i, i)})
		_, html := pageOf(t, f, page)
		if n := strings.Count(html, `<div class="embed">`); n < 3 {
			t.Errorf("payload %d: %d embeds shown, want 3 or more", i+1, n)
		}
		if problems := scriptable(html); len(problems) > 0 {
			t.Errorf("payload %d:\n%s\nsurvives into the embedding page: %v", i+1, payload, problems)
		}
	}
}

// TestBrowserShowsEmbedsInFrames: in Chromium, each embed's text is inside its frame,
// under the note's title; the page's ids are unique; screenshots in light, dark and
// mobile widths go to the artifacts.
func TestBrowserShowsEmbedsInFrames(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, testkit.SQLiteBackend(t))
	path := "Notes/Source.md"
	f.publish(f.acc, note.Draft{Content: "# Source\n\nIntro words ^intro\n\n## Part one\n\nWords of part one.\n\n- an item ^item\n- another\n\n" +
		"## Part two\n\nWords of part two, and a [[Page|link back]].\n", Path: &path})
	pagePath := "Page.md"
	page := f.publish(f.acc, note.Draft{Title: ptr("Embeds"), Path: &pagePath, Content: "## Part one\n\nThe page's own part one.\n\n" +
		"![[Source]]\n\n![[Source#Part one]]\n\n![[Source#^item]]\n\nText around ![[Source#^intro]] an inline embed.\n"})
	dir := artifactsDir(t)
	for _, scheme := range []string{"light", "dark"} {
		for _, width := range []int64{1280, 360} {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
				t.Fatal(err)
			}
			if fired, problems := visit(t, ctx, f.URL+"/s/"+page); len(fired) > 0 || len(problems) > 0 {
				t.Errorf("ran %v, DOM holds %v", fired, problems)
			}
			screenshot(t, ctx, filepath.Join(dir, fmt.Sprintf("embeds-%s-%d.png", scheme, width)))
		}
	}
	state, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`({
  frames: [...document.querySelectorAll('.embed')].map(e => e.querySelector('.embed-title a').textContent + ': ' +
    e.querySelector('.embed-content').textContent.replace(/\s+/g, ' ').trim()),
  ids: document.querySelectorAll('[id]').length,
  unique: new Set([...document.querySelectorAll('[id]')].map(e => e.id)).size,
  overflow: document.documentElement.scrollWidth - window.innerWidth,
})`))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		"Source: Source Intro words Part one Words of part one. an item another Part two Words of part two, and a link back.",
		"Source: Part one Words of part one. an item another",
		"Source: an item",
		"Source: Intro words",
	}
	if !reflect.DeepEqual(state["frames"], want) {
		t.Errorf("frames %q, want %q", state["frames"], want)
	}
	if state["ids"] != state["unique"] || state["overflow"].(float64) > 0 {
		t.Errorf("ids %v of which unique %v; overflow %v px", state["ids"], state["unique"], state["overflow"])
	}
}
