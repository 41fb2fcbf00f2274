package notes_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

type warning struct{ Code, Ref string }

// Each warning code of a publish or an update names something the page really lacks, and
// the page shows what it says instead: the name of an image not uploaded or of a file it
// cannot show, a link's text, a formula's source; and no image the note does not show.
func TestEachWarningNamesWhatThePageLacks(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		// This service does not publish: its core does, as the publish service would.
		src := "![[gone.png]] ![[song.mp3]] [[Nobody]] $\\frac{$ and `![[code.png]]`\n"
		published, err := testkit.Must(f.App.Deps().Publisher()).Publish(context.Background(), f.acc.UserCUID, note.Draft{Content: src, ShowProperties: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []warning
		for _, w := range published.Warnings {
			got = append(got, warning{w.Code, w.Ref})
		}
		want := []warning{{"unresolved_reference", "gone.png"}, {"unsupported_embed", "song.mp3"},
			{"render_fallback", `$\frac{$`}, {"unknown_note_link", "Nobody"}}
		if !sameWarnings(got, want) {
			t.Errorf("warnings %+v, want %+v", got, want)
		}
		page := string(f.Do(t, testkit.Request{Method: "GET", Path: "/s/" + published.CUID}).Expect(t, 200, "").Body)
		for _, shown := range []string{`<span class="wikilink unresolved">gone.png</span>`, `<span class="wikilink unresolved">song.mp3</span>`,
			`<span class="wikilink unresolved">Nobody</span>`, `<code class="math-source">$\frac{$</code>`, `<code>![[code.png]]</code>`} {
			if !strings.Contains(page, shown) {
				t.Errorf("the page lacks %q", shown)
			}
		}
		if strings.Contains(page, "<img") || strings.Contains(page, "<audio") || strings.Contains(page, "<math") {
			t.Errorf("the page shows what the warnings say it lacks:\n%s", page)
		}

		var updated struct{ Warnings []warning }
		f.multipartPatch(f.acc.Token, published.CUID, "", map[string]string{"content": "Only words now."},
			map[string][]byte{"spare.png": testkit.PNG(t)}).Expect(t, 200, "").Decode(t, &updated)
		if want := []warning{{"unused_image", "spare.png"}}; !sameWarnings(updated.Warnings, want) {
			t.Errorf("update warnings %+v, want %+v", updated.Warnings, want)
		}
		if page := string(f.Do(t, testkit.Request{Method: "GET", Path: "/s/" + published.CUID}).Expect(t, 200, "").Body); strings.Contains(page, "spare.png") {
			t.Errorf("the page shows the unused image:\n%s", page)
		}
	})
}

func sameWarnings(got, want []warning) bool {
	return slices.EqualFunc(got, want, func(a, b warning) bool { return a == b })
}
