package notes_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// TestBrowserShowsObsidiansDefaults loads the pages of the fixtures of line breaks, tasks
// and inline footnotes (libs/render/testdata), and of a note with Obsidian's housekeeping
// properties, and checks what a reader sees: the defaults of Obsidian's reading view.
func TestBrowserShowsObsidiansDefaults(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, testkit.SQLiteBackend(t))
	dir := artifactsDir(t)
	fixture := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "libs", "render", "testdata", name+".md"))
		if err != nil {
			t.Fatal(err)
		}
		return f.URL + "/s/" + f.publish(f.acc, note.Draft{Content: string(b)})
	}
	properties := f.URL + "/s/" + f.publish(f.acc, note.Draft{ShowProperties: true, Content: "---\npublish: true\npermalink: p\n" +
		"aliases: [Another name]\ncssclasses: [wide-page, cards]\ndescription: What it is about.\nstatus: draft\n---\nBody.\n"})
	for _, c := range []struct {
		name, url, script, want string
	}{
		{"line breaks", fixture("line-breaks"), `(() => {
  const first = document.querySelector('article > p');
  const marked = document.getElementById('^para');
  return [first.innerText.split('\n').length, marked.innerText.split('\n').length, marked.innerHTML.trim().endsWith('<br>')];
})()`, "[3 2 false]"},
		{"tasks", fixture("tasks"), `(() => {
  const q = document.querySelector('li[data-task="?"]');
  const style = getComputedStyle(q);
  return [document.querySelectorAll('li.task-list-item').length, document.querySelectorAll('li.is-checked > input:checked').length,
    document.querySelectorAll('input:not(:checked)').length, q.querySelector('input').checked,
    style.textDecorationLine, style.color !== getComputedStyle(document.querySelector('li.task-list-item:not(.is-checked)')).color];
})()`, "[16 13 3 true line-through true]"},
		{"inline footnotes", fixture("inline-footnotes"), `(() => {
  const refs = [...document.querySelectorAll('article > p a.footnote-ref')].map(a => a.textContent).join(',');
  const notes = [...document.querySelectorAll('.footnotes li')].map(li => li.innerText.split(/\s/)[0]).join(',');
  const third = document.querySelector('a.footnote-ref[href="#n-fn:3"]').getBoundingClientRect().height > 0;
  return [refs, notes, third, document.querySelector('article').innerText.includes('^[like this.')];
})()`, "[1,2,3,2,4,5,6 Written,The,The,See,a,inner* true true]"},
		{"properties", properties, `[
  [...document.querySelectorAll('table.properties th')].map(th => th.textContent).join(','),
  document.querySelector('article').className, document.querySelector('meta[name=description]').content,
  document.querySelector('.summary').textContent]`, "[status cssclass-wide-page cssclass-cards What it is about. What it is about.]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fired, problems := visit(t, ctx, c.url)
			if len(fired) > 0 || len(problems) > 0 {
				t.Errorf("ran %v, DOM holds %v", fired, problems)
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](c.script))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != c.want {
				t.Errorf("the page shows %v, want %s", got, c.want)
			}
			screenshot(t, ctx, filepath.Join(dir, "defaults-"+c.name+".png"))
		})
	}
}
