package notes_test

import (
	"fmt"
	"strings"
	"testing"

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
