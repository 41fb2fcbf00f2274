package notetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
)

// The contract's cases of edits (Editable, Commit) and Unpublish.

func commitKeepsThePreviousText(t *testing.T, s Subject) {
	p := publication(s.Owner, id('a'), at)
	p.Summary, p.Path, p.ExpiresAt = new("Before"), new("Notes/Before.md"), new(at.Add(time.Hour))
	p.Properties = map[string]any{"k": "v", "n": 2.0}
	s.create(t, p)
	later := at.Add(time.Minute)
	e := s.edit(t, p.CUID, later, nil, "", func(q *note.Publication) {
		q.Title, q.Content, q.Path, q.HTML = new("Two"), "second", nil, "<p>second</p>"
	})
	if d := diff(e.Kept.Text, p.Text); d != "" {
		t.Errorf("Editable read other than the stored text:%s", d)
	}
	if err := s.Store.Commit(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	if d := diff(s.find(t, p.CUID), e.To); d != "" {
		t.Errorf("FindView after Commit differs from the edit's publication:%s", d)
	}
	vs := s.versions(t, p.CUID)
	if len(vs) != 1 {
		t.Fatalf("%d snapshots, want 1", len(vs))
	}
	m := vs[0]
	if m.Number != e.Kept.Number || !m.CreatedAt.Equal(later) || m.Title == nil || *m.Title != *p.Title || m.ContentBytes != len(p.Content) {
		t.Errorf("snapshot %+v (title %v), want number %d made at %v of %q, %d bytes", m, m.Title, e.Kept.Number, later, *p.Title, len(p.Content))
	}
	v, err := s.Store.Version(t.Context(), note.Owned{Account: s.Owner, CUID: p.CUID}, m.Number)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(v.Text, p.Text); d != "" || v.Number != m.Number || !v.CreatedAt.Equal(later) {
		t.Errorf("Version %d (number %d, at %v) is not the text before the edit:%s", m.Number, v.Number, v.CreatedAt, d)
	}
	if _, err := s.Store.Version(t.Context(), note.Owned{Account: s.Owner, CUID: p.CUID}, m.Number+1); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Version of an unknown number: %v, want ErrNotFound", err)
	}
}

func commitPrunes(t *testing.T, s Subject) {
	p := publication(s.Owner, id('a'), at)
	p.Content = "v0"
	s.create(t, p)
	n := note.MaxVersions + 2
	var first int64
	for i := 1; i <= n; i++ {
		s.update(t, p.CUID, at.Add(time.Duration(i)*time.Minute), func(q *note.Publication) { q.Content = fmt.Sprintf("v%d", i) })
		if i == 1 {
			first = s.versions(t, p.CUID)[0].Number
		}
	}
	vs := s.versions(t, p.CUID)
	if len(vs) != note.MaxVersions {
		t.Fatalf("%d snapshots after %d edits pruning all but the %d newest, want %d", len(vs), n, note.MaxVersions, note.MaxVersions)
	}
	for i, m := range vs {
		v, err := s.Store.Version(t.Context(), note.Owned{Account: s.Owner, CUID: p.CUID}, m.Number)
		if want := fmt.Sprintf("v%d", n-1-i); err != nil || v.Content != want {
			t.Errorf("snapshot %d of the list (number %d) holds %q (%v), want %q: the newest first", i, m.Number, v.Content, err, want)
		}
	}
	if _, err := s.Store.Version(t.Context(), note.Owned{Account: s.Owner, CUID: p.CUID}, first); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Version of a pruned number: %v, want ErrNotFound", err)
	}
}

func anotherAccountsNote(t *testing.T, s Subject) {
	ctx := t.Context()
	p := s.create(t, publication(s.Owner, id('a'), at))
	s.update(t, p.CUID, at, func(q *note.Publication) { q.Content = "second" })
	before := s.find(t, p.CUID)
	number := s.versions(t, p.CUID)[0].Number

	theirs := s.edit(t, p.CUID, at, nil, "", func(q *note.Publication) { q.Content = "theirs" })
	theirs.Account = s.Other
	if err := s.Store.Commit(ctx, theirs); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Commit: %v, want ErrNotFound", err)
	}
	if _, err := s.Store.Editable(ctx, note.Owned{Account: s.Other, CUID: p.CUID}, nil); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Editable: %v, want ErrNotFound", err)
	}
	if _, err := s.Store.Versions(ctx, note.Owned{Account: s.Other, CUID: p.CUID}); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Versions: %v, want ErrNotFound", err)
	}
	if _, err := s.Store.Version(ctx, note.Owned{Account: s.Other, CUID: p.CUID}, number); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Version: %v, want ErrNotFound", err)
	}
	if err := s.Store.Unpublish(ctx, note.Owned{Account: s.Other, CUID: p.CUID}, at, note.Change{}); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Unpublish: %v, want ErrNotFound", err)
	}
	if d := diff(s.find(t, p.CUID), before); d != "" {
		t.Errorf("another account changed the note:%s", d)
	}
	if n := len(s.versions(t, p.CUID)); n != 1 {
		t.Errorf("%d snapshots, want the owner's 1", n)
	}
}

func staleEditChangesNothing(t *testing.T, s Subject) {
	ctx := t.Context()
	p := publication(s.Owner, id('a'), at)
	s.create(t, p, image(p, "a.png", 100))
	img := image(p, "b.png", 200)
	s.reserve(t, upload(p.CUID, 1), p.CUID, s.Owner, []note.StoredImage{img}, nil)
	stale := s.edit(t, p.CUID, at.Add(time.Hour), []note.StoredImage{img}, upload(p.CUID, 1), func(q *note.Publication) { q.Content = "stale" })
	s.update(t, p.CUID, at.Add(time.Minute), func(q *note.Publication) { q.Title = new("Meanwhile") })
	before := s.find(t, p.CUID)

	if err := s.Store.Commit(ctx, stale); !errors.Is(err, note.ErrStale) {
		t.Fatalf("Commit from an etag the note no longer has: %v, want ErrStale", err)
	}
	if d := diff(s.find(t, p.CUID), before); d != "" {
		t.Errorf("a stale edit changed the publication:%s", d)
	}
	if n := len(s.versions(t, p.CUID)); n != 1 {
		t.Errorf("%d snapshots after a stale edit, want the other edit's 1", n)
	}
	if got := s.imageNames(t, p.CUID); !slices.Equal(got, []string{"a.png"}) {
		t.Errorf("images %q after a stale edit, want a.png only", got)
	}
	if err := s.Store.Reserve(ctx, note.Reservation{ID: upload(p.CUID, 1), Note: p.CUID, Account: s.Owner, Quota: quota, Expires: at.Add(time.Hour)}); err != nil {
		t.Errorf("a stale edit settled its reservation: adding to it: %v", err)
	}
}

func editWithoutRenderKeepsTheRender(t *testing.T, s Subject) {
	p := s.create(t, publication(s.Owner, id('a'), at))
	e := s.edit(t, p.CUID, at.Add(time.Minute), nil, "", func(q *note.Publication) {
		q.Title, q.HTML, q.RenderID = new("Retitled"), "<p>not to be stored</p>", "r-stale"
	})
	e.Rendered = false
	// A background render is stored meanwhile: the etag stays (SaveRender).
	rendered := p
	rendered.HTML, rendered.RenderVersion, rendered.RenderID, rendered.Outline = "<h1>Rendered</h1>", 2, "r2", "o2"
	if err := s.Store.SaveRender(t.Context(), rendered, p.RenderID, note.Change{Account: p.AccountCUID, Note: p.CUID}); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.Commit(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	got := s.find(t, p.CUID)
	if deref(got.Title) != "Retitled" || got.ETag != e.To.ETag {
		t.Errorf("title %q etag %q, want the edit's", deref(got.Title), got.ETag)
	}
	if got.HTML != rendered.HTML || got.RenderID != "r2" || got.RenderVersion != 2 || got.Outline != "o2" {
		t.Errorf("render %q (%s, version %d, outline %q), want the one stored meanwhile", got.HTML, got.RenderID, got.RenderVersion, got.Outline)
	}
}

func editNames(t *testing.T, s Subject) {
	p := s.create(t, publication(s.Owner, id('a'), at))
	resolves := func(title string) bool {
		t.Helper()
		found, err := s.Store.ResolveNames(t.Context(), s.Owner, []string{note.MatchKey(title)}, at)
		if err != nil {
			t.Fatal(err)
		}
		return len(found) == 1 && found[0].CUID == p.CUID
	}
	e := s.edit(t, p.CUID, at, nil, "", func(q *note.Publication) { q.Title = new("Orchard") })
	e.Names = false
	if err := s.Store.Commit(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	if resolves("Orchard") {
		t.Error("an edit that does not write the names wrote them")
	}
	s.update(t, p.CUID, at, func(q *note.Publication) { q.Title = new("Orchard") })
	if !resolves("Orchard") || resolves(*p.Title) {
		t.Error("an edit that writes the names did not replace them")
	}
}

func commitReplacesImages(t *testing.T, s Subject) {
	ctx := t.Context()
	p := publication(s.Owner, id('a'), at)
	s.create(t, p, image(p, "a.png", 600))
	next := image(p, "a.png", 300)
	expires := at.Add(time.Hour)
	if err := s.Store.Reserve(ctx, note.Reservation{ID: "up", Note: p.CUID, Account: s.Owner, Create: true, Bytes: 300, Images: 1, Quota: 800, Expires: expires}); !errors.Is(err, note.ErrQuotaExceeded) {
		t.Errorf("300 bytes more over 600 of 800: %v, want ErrQuotaExceeded", err)
	}
	if err := s.Store.Reserve(ctx, note.Reservation{ID: "up", Note: p.CUID, Account: s.Owner, Create: true, Bytes: 300, Images: 1, Replaces: []string{"a.png"}, Quota: 800, Expires: expires}); err != nil {
		t.Fatalf("300 bytes replacing the 600 of a.png, within 800: %v", err)
	}
	e := s.edit(t, p.CUID, at, []note.StoredImage{next}, "up", func(*note.Publication) {})
	if !slices.Equal(e.Images, []note.StoredImage{next}) {
		t.Fatal("the edit lost its image")
	}
	if err := s.Store.Commit(ctx, e); err != nil {
		t.Fatal(err)
	}
	if iv, err := s.Store.FindImageView(ctx, s.Owner, p.CUID, "a.png"); err != nil || iv.Image.BlobKey != next.BlobKey {
		t.Errorf("a.png is %+v (%v), want the new image", iv.Image, err)
	}
	if err := s.Store.Reserve(ctx, note.Reservation{ID: "up", Note: p.CUID, Account: s.Owner, Quota: quota, Expires: expires}); !errors.Is(err, note.ErrUploadExpired) {
		t.Errorf("adding to the reservation Commit settled: %v, want ErrUploadExpired", err)
	}
	if !s.fits(t, 700) || s.fits(t, 701) {
		t.Errorf("the usage is not the new image's 300 bytes: the replaced image's bytes were not released")
	}
	gone := s.edit(t, p.CUID, at, []note.StoredImage{image(p, "b.png", 5)}, "gone", func(*note.Publication) {})
	if err := s.Store.Commit(ctx, gone); !errors.Is(err, note.ErrUploadExpired) {
		t.Errorf("Commit without its reservation: %v, want ErrUploadExpired", err)
	}
	if got := s.imageNames(t, p.CUID); !slices.Equal(got, []string{"a.png"}) {
		t.Errorf("images %q after a refused commit, want a.png only", got)
	}
}

func editable(t *testing.T, s Subject) {
	ctx := t.Context()
	p := publication(s.Owner, id('a'), at)
	s.create(t, p, image(p, "b.png", 10), image(p, "a.png", 20))
	news := []note.StoredImage{image(p, "c.png", 30), image(p, "a.png", 40)}
	cur, err := s.Store.Editable(ctx, note.Owned{Account: s.Owner, CUID: p.CUID}, news)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(cur.Publication, s.find(t, p.CUID)); d != "" {
		t.Errorf("Editable returned other than the stored publication:%s", d)
	}
	if sorted := slices.Sorted(slices.Values(cur.Images)); !slices.Equal(sorted, []string{"a.png", "b.png", "c.png"}) {
		t.Errorf("image names %q, want a.png, b.png and c.png, each once", cur.Images)
	}
	s.update(t, p.CUID, at, func(q *note.Publication) { q.Content = "second" })
	if vs := s.versions(t, p.CUID); len(vs) != 1 || vs[0].Number != cur.Version {
		t.Errorf("versions %+v, want one numbered %d, as Editable gave", vs, cur.Version)
	}
	if again, err := s.Store.Editable(ctx, note.Owned{Account: s.Owner, CUID: p.CUID}, nil); err != nil || again.Version != cur.Version+1 {
		t.Errorf("the next version after a commit: %d (%v), want %d", again.Version, err, cur.Version+1)
	}
	if _, err := s.Store.Editable(ctx, note.Owned{Account: s.Other, CUID: p.CUID}, nil); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Editable of another account's note: %v, want ErrNotFound", err)
	}

	expired := publication(s.Owner, id('b'), at.Add(-2*time.Hour))
	expired.ExpiresAt = new(at.Add(-time.Hour))
	s.create(t, expired)
	if _, err := s.Store.Editable(ctx, note.Owned{Account: s.Owner, CUID: expired.CUID}, nil); err != nil {
		t.Errorf("Editable of an expired note: %v, want the note", err)
	}
	if got := s.update(t, expired.CUID, at, func(q *note.Publication) { q.ExpiresAt = nil }); got.ExpiresAt != nil {
		t.Errorf("an expired note's expiry was not cleared: %v", got.ExpiresAt)
	}
}

func unpublish(t *testing.T, s Subject) {
	ctx := t.Context()
	p := publication(s.Owner, id('a'), at)
	s.create(t, p, image(p, "a.png", 600))
	if s.fits(t, 401) {
		t.Fatal("the image's 600 bytes are not charged")
	}
	before := s.find(t, p.CUID)
	later := at.Add(time.Hour)
	s.unpublish(t, p.CUID, later)

	if !s.fits(t, 1000) {
		t.Error("Unpublish did not release the image's bytes")
	}
	want := before
	want.Unpublished, want.UpdatedAt = true, later
	if d := diff(s.find(t, p.CUID), want); d != "" {
		t.Errorf("FindView of the unpublished note:%s", d)
	}
	late := note.Edit{Owned: note.Owned{Account: s.Owner, CUID: p.CUID}, From: before.ETag, To: before, Kept: note.Version{Number: 1}, Change: note.Change{Account: s.Owner, Note: p.CUID}}
	if err := s.Store.Commit(ctx, late); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Commit: %v, want ErrNotFound", err)
	}
	if err := s.Store.Unpublish(ctx, note.Owned{Account: s.Owner, CUID: p.CUID}, later, note.Change{}); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Unpublish again: %v, want ErrNotFound", err)
	}
	if _, err := s.Store.Editable(ctx, note.Owned{Account: s.Owner, CUID: p.CUID}, nil); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Editable: %v, want ErrNotFound", err)
	}
	if _, err := s.Store.Versions(ctx, note.Owned{Account: s.Owner, CUID: p.CUID}); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("Versions: %v, want ErrNotFound", err)
	}
	if _, err := s.Store.FindImageView(ctx, s.Owner, p.CUID, "a.png"); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("FindImageView of its released image: %v, want ErrNotFound", err)
	}
	if rows, err := s.Store.List(ctx, s.Owner, nil, 10); err != nil || len(rows) != 0 {
		t.Errorf("List: %d rows (%v), want none", len(rows), err)
	}
}
