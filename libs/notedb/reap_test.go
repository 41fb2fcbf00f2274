package notedb_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// reaper is the note reaper over the fixture's store and the backend's object store.
func (f fixture) reaper(t *testing.T, b testkit.Backend) (*note.Reaper, blob.Store) {
	t.Helper()
	blobs := testkit.OpenBlobs(t, b)
	return note.NewReaper(f.store, blobs), blobs
}

// edit stores n updates of p's content at now, each leaving a version snapshot.
func (f fixture) edit(t *testing.T, id string, n int, now time.Time) {
	t.Helper()
	for i := range n {
		f.commit(t, id, now, func(p *note.Publication) { p.Content = "edit " + string(rune('a'+i)) })
	}
}

// commit stores the edit change makes of the owner's publication id at now, keeping
// its text as a version, and fails the test on an error.
func (f fixture) commit(t *testing.T, id string, now time.Time, change func(p *note.Publication)) {
	t.Helper()
	cur, err := f.store.Editable(context.Background(), note.Owned{Account: f.owner, CUID: id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	to := cur.Publication
	change(&to)
	to.ETag = fmt.Sprintf("etag-%d", cur.Version)
	e := note.Edit{Owned: note.Owned{Account: f.owner, CUID: id}, From: cur.ETag, To: to, Kept: note.Version{Number: cur.Version, CreatedAt: now, Text: cur.Text},
		Prune: cur.Version - note.MaxVersions}
	if err := f.store.Commit(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}

func TestPurgeUnpublishedDeletesTextAndVersionsAfterTheRetention(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		reaper, _ := f.reaper(t, b)
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
		// Expired, not unpublished: its author can still make it active again.
		f.commit(t, expired, t0, func(p *note.Publication) { p.ExpiresAt = &t0 })
		for id, at := range map[string]time.Time{old: t0, withImage: t0, recent: t0.Add(time.Hour)} {
			if err := f.store.Unpublish(ctx, note.Owned{Account: f.owner, CUID: id}, at, note.Change{}); err != nil {
				t.Fatal(err)
			}
		}

		if r, err := reaper.PurgeUnpublished(ctx, t0.Add(-time.Millisecond), 100, 0); err != nil || r.Notes != 0 || r.Versions != 0 {
			t.Fatalf("a purge before anything is due = %+v, %v; want nothing deleted", r, err)
		}
		r, err := reaper.PurgeUnpublished(ctx, t0, 100, 0)
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
		if _, err := reaper.Reap(ctx, 100, 0); err != nil {
			t.Fatal(err)
		}
		if r, err := reaper.PurgeUnpublished(ctx, t0.Add(time.Hour), 100, 0); err != nil || r.Notes != 2 || r.Versions != 5 {
			t.Fatalf("PurgeUnpublished after Reap = %+v, %v; want the note with the image and the later one", r, err)
		}
		if _, err := f.store.FindView(ctx, recent); err == nil {
			t.Error("a purged note is still found")
		}
		if err := f.store.Unpublish(ctx, note.Owned{Account: f.owner, CUID: recent}, t0, note.Change{}); err == nil {
			t.Error("unpublishing a purged note succeeded; want not found")
		}
	})
}

func TestPurgeUnpublishedRunsInBoundedBatches(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		reaper, _ := f.reaper(t, b)
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
			if err := f.store.Unpublish(ctx, note.Owned{Account: f.owner, CUID: id}, at, note.Change{}); err != nil {
				t.Fatal(err)
			}
		}
		// A purge that stops after one batch of 3 deleted at most those 3; a crash there
		// loses nothing either, since each batch is one transaction.
		r, err := reaper.PurgeUnpublished(ctx, f.now, 3, 1)
		if err != nil || r.Batches != 1 || r.Notes > 3 || r.Notes != r.Versions {
			t.Fatalf("one batch of 3 = %+v, %v", r, err)
		}
		rest, err := reaper.PurgeUnpublished(ctx, f.now, 3, 0)
		if err != nil || r.Notes+rest.Notes != 4 || rest.Batches < 1 {
			t.Fatalf("the rest = %+v, %v after %+v; want the 4 due notes in all", rest, err, r)
		}
		for i, id := range ids {
			if p, _ := testkit.StoredRows(t, b, id); (p == 0) != (i%2 == 0) {
				t.Errorf("note %d: %d rows after the purge", i, p)
			}
		}
		if idle, err := reaper.PurgeUnpublished(ctx, f.now, 3, 0); err != nil || idle.Notes != 0 {
			t.Errorf("an idle purge = %+v, %v", idle, err)
		}
	})
}

// put stores data under key in blobs.
func put(t *testing.T, blobs blob.Store, key, data string) {
	t.Helper()
	if _, err := blobs.Put(context.Background(), key, strings.NewReader(data), int64(len(data)), "image/png"); err != nil {
		t.Fatal(err)
	}
}

// keys lists the keys blobs keeps under prefix.
func keys(t *testing.T, blobs blob.Store, prefix string) []string {
	t.Helper()
	var out []string
	if err := blobs.List(context.Background(), prefix, func(o blob.Info) error {
		out = append(out, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReapDeletesReleasedImagesWithTheirObjects(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		reaper, blobs := f.reaper(t, b)
		ctx := context.Background()
		gone, kept := cuid.New(), cuid.New()
		var goneImages []note.StoredImage
		for i := range 3 {
			key := f.owner + "/" + gone + "/" + cuid.New()
			put(t, blobs, key, strings.Repeat("g", i+1))
			goneImages = append(goneImages, note.StoredImage{AccountCUID: f.owner, PublicationCUID: gone, Filename: string(rune('a'+i)) + ".png",
				MediaType: "image/png", Size: int64(i + 1), SHA256: "abc", BlobKey: key, CreatedAt: f.now})
		}
		keptKey := f.owner + "/" + kept + "/" + cuid.New()
		put(t, blobs, keptKey, "kept")
		f.create(t, gone, "etag", goneImages...)
		f.create(t, kept, "etag", note.StoredImage{AccountCUID: f.owner, PublicationCUID: kept, Filename: "k.png",
			MediaType: "image/png", Size: 4, SHA256: "abc", BlobKey: keptKey, CreatedAt: f.now})
		if r, err := reaper.Reap(ctx, 2, 0); err != nil || r.Images != 0 || r.Batches != 0 {
			t.Fatalf("Reap before any unpublish = %+v, %v; want nothing", r, err)
		}
		if err := f.store.Unpublish(ctx, note.Owned{Account: f.owner, CUID: gone}, f.now, note.Change{}); err != nil {
			t.Fatal(err)
		}
		// One batch of 2, then the rest: what a run stopped by maxBatches leaves, the next takes.
		r, err := reaper.Reap(ctx, 2, 1)
		if err != nil || r.Images != 2 || r.Batches != 1 {
			t.Fatalf("one batch of 2 = %+v, %v", r, err)
		}
		rest, err := reaper.Reap(ctx, 2, 0)
		if err != nil || rest.Images != 1 || r.Bytes+rest.Bytes != 6 {
			t.Fatalf("the rest = %+v, %v after %+v; want 3 images of 6 bytes in all", rest, err, r)
		}
		if got := keys(t, blobs, f.owner+"/"); len(got) != 1 || got[0] != keptKey {
			t.Errorf("the store keeps %v after the reap, want only %s", got, keptKey)
		}
	})
}

// failingDelete is an object store whose Delete fails.
type failingDelete struct{ blob.Store }

func (failingDelete) Delete(context.Context, ...string) error { return blob.ErrUnavailable }

func TestReapKeepsTheRowsWhenDeletingTheObjectsFails(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		_, blobs := f.reaper(t, b)
		ctx := context.Background()
		id := cuid.New()
		key := f.owner + "/" + id + "/" + cuid.New()
		put(t, blobs, key, "abc")
		f.create(t, id, "etag", note.StoredImage{AccountCUID: f.owner, PublicationCUID: id, Filename: "a.png",
			MediaType: "image/png", Size: 3, SHA256: "abc", BlobKey: key, CreatedAt: f.now})
		if err := f.store.Unpublish(ctx, note.Owned{Account: f.owner, CUID: id}, f.now, note.Change{}); err != nil {
			t.Fatal(err)
		}
		if r, err := note.NewReaper(f.store, failingDelete{blobs}).Reap(ctx, 10, 0); err == nil || r.Images != 0 {
			t.Fatalf("Reap with a failing store = %+v, %v; want the store's error and nothing counted", r, err)
		}
		reaper := note.NewReaper(f.store, blobs)
		if r, err := reaper.Reap(ctx, 10, 0); err != nil || r.Images != 1 || r.Bytes != 3 {
			t.Fatalf("Reap once the store works = %+v, %v; want the image the failed run left", r, err)
		}
		if got := keys(t, blobs, ""); len(got) != 0 {
			t.Errorf("the store keeps %v", got)
		}
	})
}

func TestReleaseExpiredAndSweepDeleteOnlyWhatNothingNames(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		reaper, blobs := f.reaper(t, b)
		ctx := context.Background()
		published, live, dead, stray := cuid.New(), cuid.New(), cuid.New(), cuid.New()
		publishedKey := f.owner + "/" + published + "/" + cuid.New()
		put(t, blobs, publishedKey, "published")
		f.create(t, published, "etag", note.StoredImage{AccountCUID: f.owner, PublicationCUID: published, Filename: "a.png",
			MediaType: "image/png", Size: 9, SHA256: "abc", BlobKey: publishedKey, CreatedAt: f.now})
		// An upload still running, and one that died: their reservations expire later and now.
		for id, expires := range map[string]time.Time{live: f.now.Add(time.Hour), dead: f.now.Add(-time.Second)} {
			if err := f.store.Reserve(ctx, note.Reservation{ID: "upload-" + id, Note: id, Account: f.owner, Create: true,
				Bytes: 4, Images: 1, Quota: 1e9, Expires: expires}); err != nil {
				t.Fatal(err)
			}
			put(t, blobs, f.owner+"/"+id+"/"+cuid.New(), id[:4])
		}
		strayKey := f.owner + "/" + stray + "/" + cuid.New()
		put(t, blobs, strayKey, "stray")

		r, err := reaper.ReleaseExpired(ctx, f.now, 1)
		if err != nil || r.Reservations != 1 || r.Objects != 1 || r.Bytes != 4 {
			t.Fatalf("ReleaseExpired = %+v, %v; want the dead upload's reservation and its object of 4 bytes", r, err)
		}
		if got := keys(t, blobs, f.owner+"/"+dead+"/"); len(got) != 0 {
			t.Errorf("the dead upload's objects %v are kept", got)
		}
		if r, err := reaper.ReleaseExpired(ctx, f.now, 1); err != nil || r.Reservations != 0 || r.Objects != 0 {
			t.Errorf("a second ReleaseExpired = %+v, %v; want nothing", r, err)
		}

		if r, err := reaper.SweepOrphans(ctx, time.Now().Add(-time.Hour)); err != nil || r.Objects != 0 {
			t.Fatalf("SweepOrphans of old objects = %+v, %v; want nothing deleted (all are younger)", r, err)
		}
		r, err = reaper.SweepOrphans(ctx, time.Now().Add(time.Minute))
		if err != nil || r.Objects != 1 || r.Bytes != int64(len("stray")) {
			t.Fatalf("SweepOrphans = %+v, %v; want the stray object", r, err)
		}
		if got := keys(t, blobs, f.owner+"/"+stray+"/"); len(got) != 0 {
			t.Errorf("the stray object is kept: %v", got)
		}
		for _, prefix := range []string{f.owner + "/" + published + "/", f.owner + "/" + live + "/"} {
			if got := keys(t, blobs, prefix); len(got) != 1 {
				t.Errorf("under %s the store keeps %v, want the one object a row names", prefix, got)
			}
		}
	})
}

func TestCopyLegacyImagesCopiesOnceAndKeepsTheRows(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		reaper, blobs := f.reaper(t, b)
		ctx := context.Background()
		gdb := testkit.OpenDB(t, b)
		legacy := map[string]string{}
		for i := range 3 {
			legacy[f.owner+"/"+cuid.New()+"/"+cuid.New()] = strings.Repeat("x", i+1)
		}
		for k, data := range legacy {
			if err := gdb.Exec("INSERT INTO blobs (key, data) VALUES (?, ?)", k, []byte(data)).Error; err != nil {
				t.Fatal(err)
			}
		}
		var progress []note.Copied
		c, err := reaper.CopyLegacyImages(ctx, 2, func(c note.Copied) { progress = append(progress, c) })
		if err != nil || c.Objects != 3 || c.Skipped != 0 || c.Bytes != 6 || len(progress) != 2 {
			t.Fatalf("CopyLegacyImages = %+v, %v with progress %v; want 3 objects of 6 bytes, reported after each of 2 batches", c, err, progress)
		}
		for k, data := range legacy {
			rc, _, err := blobs.Get(ctx, k, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			_ = rc.Close()
			if err != nil || !bytes.Equal(got, []byte(data)) {
				t.Errorf("object %s = %q, %v; want %q", k, got, err, data)
			}
		}
		if c, err := reaper.CopyLegacyImages(ctx, 2, func(note.Copied) {}); err != nil || c.Objects != 0 || c.Skipped != 3 {
			t.Errorf("copying again = %+v, %v; want all 3 skipped", c, err)
		}
		var rows int64
		if err := gdb.Table("blobs").Count(&rows).Error; err != nil || rows != 3 {
			t.Errorf("%d legacy rows left (%v), want the 3 kept", rows, err)
		}
	})
}
