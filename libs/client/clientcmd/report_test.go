package clientcmd

import (
	"testing"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/wire"
)

// TestALinkCountsAsUnresolvedOnlyIfNoPublicationHasItsName: the summary's
// unknown_note_link counts the links that no publication answers to once the run is done,
// by the server's names (note.Text.Names).
func TestALinkCountsAsUnresolvedOnlyIfNoPublicationHasItsName(t *testing.T) {
	garden, titled := "Garden/Herbs/Basil.md", "Untitled path"
	r := &run{
		all:    []wire.NoteListItem{{Path: &garden, Status: "active"}, {Title: &titled, Status: "active"}},
		states: map[string]*publishedFile{"Projects/Plan.md": {}},
		notes:  []*prepared{{names: note.Text{Path: new("Café.md"), Properties: map[string]any{"aliases": []any{"Coffee"}}}.Names()}},
	}
	n := r.publishedNames()
	for _, tc := range []struct {
		from, target string
		want         bool
	}{
		{"Home.md", "Basil", true},
		{"Home.md", "basil.md", true},
		{"Home.md", "Garden/Herbs/Basil", true},
		{"Garden/Index.md", "Herbs/Basil", true},
		{"Home.md", "Herbs/Basil", false},
		{"Home.md", "Plan", true},
		{"Home.md", "coffee", true},
		{"Home.md", "cafe\u0301", true},
		{"Home.md", "untitled path", true},
		{"Home.md", "Nowhere", false},
	} {
		if got := n.resolves(tc.from, tc.target); got != tc.want {
			t.Errorf("from %s, %q resolves = %v, want %v", tc.from, tc.target, got, tc.want)
		}
	}
}
