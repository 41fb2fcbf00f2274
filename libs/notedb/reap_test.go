package notedb_test

import (
	"context"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// edit stores n updates of p's content at now, each leaving a version snapshot.
func (f fixture) edit(t *testing.T, id string, n int, now time.Time) {
	t.Helper()
	for i := range n {
		_, err := f.store.Update(context.Background(), id, f.owner, now, nil, "", func(p *note.Publication, _ []string) (note.Change, error) {
			p.Content = "edit " + string(rune('a'+i))
			return note.Change{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestPurgeUnpublishedDeletesTextAndVersionsAfterTheRetention(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		t0 := f.now
		img := func(id string) note.StoredImage {
			return note.StoredImage{AccountCUID: f.owner, PublicationCUID: id, Filename: "a.png", MediaType: "image/png",
				Size: 3, SHA256: "abc", BlobKey: "images/" + id, CreatedAt: t0}
		}
		old, recent, active, expired, withImage := cuid.New(), cuid.New(), cuid.New(), cuid.New(), cuid.New()
		for _, id := range []string{old, recent, active, expired} {
			f.create(t, id, "etag")
			f.edit(t, id, 3, t0)
		}
		f.create(t, withImage, "etag", img(withImage))
		f.edit(t, withImage, 2, t0)
		if _, err := f.store.Update(ctx, expired, f.owner, t0, nil, "", func(p *note.Publication, _ []string) (note.Change, error) {
			p.ExpiresAt = &t0 // Expired, not unpublished: its author can still make it active again.
			return note.Change{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		for id, at := range map[string]time.Time{old: t0, withImage: t0, recent: t0.Add(time.Hour)} {
			if err := f.store.Unpublish(ctx, id, f.owner, at, note.Change{}); err != nil {
				t.Fatal(err)
			}
		}

		if r, err := f.store.PurgeUnpublished(ctx, t0.Add(-time.Millisecond), 100, 0); err != nil || r.Notes != 0 || r.Versions != 0 {
			t.Fatalf("a purge before anything is due = %+v, %v; want nothing deleted", r, err)
		}
		r, err := f.store.PurgeUnpublished(ctx, t0, 100, 0)
		if err != nil || r.Notes != 1 || r.Versions != 3 {
			t.Fatalf("PurgeUnpublished = %+v, %v; want the note unpublished at the cutoff and its 3 versions", r, err)
		}
		if p, v := testkit.StoredRows(t, b, old); p != 0 || v != 0 {
			t.Errorf("the purged note left %d rows and %d versions", p, v)
		}
		for name, id := range map[string]string{"unpublished after the cutoff": recent, "active": active, "expired": expired} {
			if p, v := testkit.StoredRows(t, b, id); p != 1 || v < 3 {
				t.Errorf("the %s note has %d rows and %d versions; want it kept whole", name, p, v)
			}
		}
		// Its image is not reaped yet, so the note stays: no image may point at nothing.
		if p, v := testkit.StoredRows(t, b, withImage); p != 1 || v != 2 {
			t.Fatalf("the note with an unreaped image has %d rows and %d versions; want it kept until its image is reaped", p, v)
		}
		if _, err := f.store.Reap(ctx, 100, 0); err != nil {
			t.Fatal(err)
		}
		if r, err := f.store.PurgeUnpublished(ctx, t0.Add(time.Hour), 100, 0); err != nil || r.Notes != 2 || r.Versions != 5 {
			t.Fatalf("PurgeUnpublished after Reap = %+v, %v; want the note with the image and the later one", r, err)
		}
		if _, err := f.store.FindView(ctx, recent); err == nil {
			t.Error("a purged note is still found")
		}
		if err := f.store.Unpublish(ctx, recent, f.owner, t0, note.Change{}); err == nil {
			t.Error("unpublishing a purged note succeeded; want not found")
		}
	})
}

func TestPurgeUnpublishedRunsInBoundedBatches(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		var ids []string
		for i := range 7 {
			id := cuid.New()
			ids = append(ids, id)
			f.create(t, id, "etag")
			f.edit(t, id, 1, f.now)
			// Every other note was unpublished too recently; the batches must page past them.
			at := f.now
			if i%2 == 1 {
				at = f.now.Add(time.Hour)
			}
			if err := f.store.Unpublish(ctx, id, f.owner, at, note.Change{}); err != nil {
				t.Fatal(err)
			}
		}
		// A purge that stops after one batch of 3 deleted at most those 3; a crash there
		// loses nothing either, since each batch is one transaction.
		r, err := f.store.PurgeUnpublished(ctx, f.now, 3, 1)
		if err != nil || r.Batches != 1 || r.Notes > 3 || r.Notes != r.Versions {
			t.Fatalf("one batch of 3 = %+v, %v", r, err)
		}
		rest, err := f.store.PurgeUnpublished(ctx, f.now, 3, 0)
		if err != nil || r.Notes+rest.Notes != 4 || rest.Batches < 1 {
			t.Fatalf("the rest = %+v, %v after %+v; want the 4 due notes in all", rest, err, r)
		}
		for i, id := range ids {
			if p, _ := testkit.StoredRows(t, b, id); (p == 0) != (i%2 == 0) {
				t.Errorf("note %d: %d rows after the purge", i, p)
			}
		}
		if idle, err := f.store.PurgeUnpublished(ctx, f.now, 3, 0); err != nil || idle.Notes != 0 {
			t.Errorf("an idle purge = %+v, %v", idle, err)
		}
	})
}
