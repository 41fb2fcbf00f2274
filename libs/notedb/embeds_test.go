package notedb_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestEmbeddedReadsTheAuthorsActiveRenders(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		active := f.create(t, "aaaaaaaaaaaaaaaaaaaaaaaa", "e1")
		expired, gone, soon := active, active, active
		expired.CUID, expired.ExpiresAt = "bbbbbbbbbbbbbbbbbbbbbbbb", &f.now
		gone.CUID, gone.Title = "cccccccccccccccccccccccc", new("Gone")
		later := f.now.Add(time.Hour)
		soon.CUID, soon.Title, soon.Path, soon.ExpiresAt, soon.Outline = "dddddddddddddddddddddddd", nil, new("Dir/Soon.md"), &later, `{"b":["x"]}`
		for _, p := range []note.Publication{expired, gone, soon} {
			if err := f.store.Create(ctx, p, nil, "", note.Change{Account: p.AccountCUID, Note: p.CUID}); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.store.Unpublish(ctx, note.Owned{Account: f.owner, CUID: gone.CUID}, f.now, note.Change{}); err != nil {
			t.Fatal(err)
		}
		cuids := []string{active.CUID, expired.CUID, gone.CUID, soon.CUID, "eeeeeeeeeeeeeeeeeeeeeeee"}
		got, err := f.store.Embedded(ctx, f.owner, cuids, f.now, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b note.Embedded) int { return strings.Compare(a.CUID, b.CUID) })
		want := []note.Embedded{
			{CUID: active.CUID, Title: active.Title, HTML: active.HTML, Links: active.Links, ETag: "e1", RenderID: "r1"},
			{CUID: soon.CUID, Path: soon.Path, HTML: soon.HTML, Links: soon.Links, Outline: soon.Outline, ETag: "e1", RenderID: "r1", ExpiresAt: &later},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Embedded = %+v, want %+v (the active ones only)", got, want)
		}
		if other, err := f.store.Embedded(ctx, "someone-else", cuids, f.now, 1<<20); err != nil || len(other) != 0 {
			t.Errorf("another account read %v (%v), want none", other, err)
		}
		// Renders of 14 bytes each, the smallest first, by cuid among equals: the second
		// comes without its HTML, which is not read.
		some, err := f.store.Embedded(ctx, f.owner, cuids, f.now, 20)
		slices.SortFunc(some, func(a, b note.Embedded) int { return strings.Compare(a.CUID, b.CUID) })
		if err != nil || len(some) != 2 || some[0].Over || some[0].HTML != active.HTML || !some[1].Over || some[1].HTML != "" {
			t.Errorf("within 20 bytes: %+v (%v), want the first render only, the second over the allowance", some, err)
		}
	})
}
