package notedb_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/testkit"
)

// TestLinkKeysAreKeptWithTheirPublication publishes a note with links and checks that
// its rows of note_links hold every key its links look up (relative to its folder), are
// written again when it moves, and are gone when it is unpublished; and that `site:
// false` is kept in site_excluded, which SiteMembers reads.
func TestLinkKeysAreKeptWithTheirPublication(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		ctx := context.Background()
		gdb := testkit.OpenDB(t, b)
		owner, _ := newAccount(t, gdb, "Ada")
		store := notedb.New(gdb, testkit.Changes())
		now := time.Now().UTC().Truncate(time.Millisecond)
		keys := func(cuid string) []string {
			t.Helper()
			var out []string
			if err := gdb.Raw("SELECT key FROM note_links WHERE publication_cuid = ? ORDER BY key", cuid).Scan(&out).Error; err != nil {
				t.Fatal(err)
			}
			return out
		}
		p := note.Publication{CUID: "linker", AccountCUID: owner, CreatedAt: now, UpdatedAt: now, ETag: "e1",
			Text:  note.Text{Content: "x", Path: new("Garden/From.md"), Properties: map[string]any{"site": false}},
			Links: note.Links{Nonce: "n", List: []note.Link{{Target: "Beta"}, {Target: "sub/Gamma", Fragment: "h"}, {Target: "photo.png", Embed: true}}}}
		if err := store.Create(ctx, p, nil, "", note.Change{Account: owner, Note: p.CUID}); err != nil {
			t.Fatal(err)
		}
		want := []string{"beta", "garden/sub/gamma.md", "sub/gamma", "sub/gamma.md"}
		if got := keys(p.CUID); !slices.Equal(got, want) {
			t.Fatalf("note_links of a new publication = %q, want %q", got, want)
		}
		members, err := store.SiteMembers(ctx, owner)
		if err != nil || len(members) != 1 || !members[0].Excluded {
			t.Fatalf("SiteMembers = %+v, %v; want the note, excluded by site: false", members, err)
		}

		cur, err := store.Editable(ctx, note.Owned{Account: owner, CUID: p.CUID}, nil)
		if err != nil {
			t.Fatal(err)
		}
		moved := cur.Publication
		moved.Path, moved.ETag = new("Elsewhere/From.md"), "e2"
		if err := store.Commit(ctx, note.Edit{Owned: note.Owned{Account: owner, CUID: p.CUID}, From: "e1", To: moved,
			Kept: note.Version{Number: 1, CreatedAt: now}, Names: true}); err != nil {
			t.Fatal(err)
		}
		want = []string{"beta", "elsewhere/sub/gamma.md", "sub/gamma", "sub/gamma.md"}
		if got := keys(p.CUID); !slices.Equal(got, want) {
			t.Fatalf("note_links after a move = %q, want %q", got, want)
		}

		if err := store.Unpublish(ctx, note.Owned{Account: owner, CUID: p.CUID}, now, note.Change{}); err != nil {
			t.Fatal(err)
		}
		if got := keys(p.CUID); len(got) != 0 {
			t.Fatalf("note_links of an unpublished publication = %q, want none", got)
		}
	})
}
