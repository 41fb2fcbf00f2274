package app_test

import (
	"context"
	"testing"

	"github.com/sharenote/sharenote/libs/app"
)

// TestNewWordsKeepTheAnchors: a note's new content with the same headings and block ids
// keeps every link's anchor, though the spans of its outline moved, so its update tells
// no one that its author's links changed.
func TestNewWordsKeepTheAnchors(t *testing.T) {
	ctx := context.Background()
	var r app.Renderer
	outline := func(md string) string {
		t.Helper()
		out, err := r.Render(ctx, "tenant", md, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out.Outline
	}
	before, after := outline("# A\n\nshort ^b\n\n## C\n"), outline("# A\n\nmuch longer words ^b\n\n## C\n")
	if before == after || !r.SameAnchors(before, after) {
		t.Errorf("new words: outlines %q and %q should differ in their spans only", before, after)
	}
	if r.SameAnchors(before, outline("# A\n\nshort ^x\n\n## C\n")) || r.SameAnchors(before, outline("# A\n\nshort ^b\n\n## D\n")) {
		t.Error("another block id or heading should change the anchors")
	}
}
