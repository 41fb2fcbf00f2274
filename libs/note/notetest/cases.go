package notetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
)

// The cases of the contract, in the order of storerCases: here those of Create, FindView,
// FindCard and paths; edits.go, uploads.go and reads.go hold the rest. Each asserts
// through the Store's methods only, and only what the doc comments promise: ports.go's,
// and those of the types its methods take and return.

func createThenFindView(t *testing.T, s Subject) {
	p := publication(s.Owner, id('a'), at)
	p.Summary, p.Path, p.ExpiresAt, p.ShowProperties = new("A summary"), new("Garden/Plan.md"), new(at.Add(30*24*time.Hour)), true
	p.Properties = map[string]any{"k": "v", "n": 2.0, "tags": []any{"x", "y"}, "nested": map[string]any{"a": true}}
	p.UpdatedAt = at.Add(time.Second)
	p.Links = note.Links{Nonce: "n1", List: []note.Link{{Target: "B"}, {Target: "C_%", Fragment: "part", Embed: true}}}
	p.RenderTries, p.RenderMisses, p.RenderRetry = 2, 1, at.Add(time.Minute)
	s.create(t, p)

	v, err := s.Store.FindView(t.Context(), p.CUID)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(v.Publication, p); d != "" {
		t.Errorf("FindView read other than what Create stored:%s", d)
	}
	if v.Owner != s.Settings {
		t.Errorf("owner's settings %+v, want %+v", v.Owner, s.Settings)
	}
	if _, err := s.Store.FindView(t.Context(), id('z')); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("FindView of an unknown cuid: %v, want ErrNotFound", err)
	}
}

func findCard(t *testing.T, s Subject) {
	p := publication(s.Owner, id('a'), at)
	p.Summary, p.Path, p.ExpiresAt = new("A summary"), new("Garden/Plan.md"), new(at.Add(time.Hour))
	p.Properties = map[string]any{"description": "Seeds"}
	s.create(t, p)
	want := note.Publication{CUID: p.CUID, AccountCUID: p.AccountCUID,
		Text: note.Text{Title: p.Title, Summary: p.Summary, Path: p.Path, Properties: p.Properties, ExpiresAt: p.ExpiresAt}}
	check := func(state string) {
		t.Helper()
		v, err := s.Store.FindCard(t.Context(), p.CUID)
		if err != nil {
			t.Fatalf("%s: %v", state, err)
		}
		if d := diff(v.Publication, want); d != "" {
			t.Errorf("%s: FindCard read other than the card's fields:%s", state, d)
		}
		if v.Owner != s.Settings {
			t.Errorf("%s: owner's settings %+v, want %+v", state, v.Owner, s.Settings)
		}
	}
	check("active")
	s.unpublish(t, p.CUID, at.Add(time.Minute))
	want.Unpublished = true
	check("unpublished")
	if _, err := s.Store.FindCard(t.Context(), id('z')); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("FindCard of an unknown cuid: %v, want ErrNotFound", err)
	}
}

func createSettlesTheReservation(t *testing.T, s Subject) {
	ctx := t.Context()
	p := publication(s.Owner, id('a'), at)
	if err := s.Store.Reserve(ctx, note.Reservation{ID: "up", Note: p.CUID, Account: s.Owner, Create: true, Bytes: 400, Images: 1, Quota: 1000, Expires: at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.Create(ctx, p, []note.StoredImage{image(p, "a.png", 400)}, "up", created(p)); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.Reserve(ctx, note.Reservation{ID: "up", Note: p.CUID, Account: s.Owner, Quota: 1000, Expires: at.Add(time.Hour)}); !errors.Is(err, note.ErrUploadExpired) {
		t.Errorf("adding to the reservation Create settled: %v, want ErrUploadExpired", err)
	}
	if err := s.Store.Release(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	if !s.fits(t, 600) || s.fits(t, 601) {
		t.Errorf("the image's 400 bytes are not charged, once, after Create settled them and a Release")
	}
	if got := s.imageNames(t, p.CUID); !slices.Equal(got, []string{"a.png"}) {
		t.Errorf("images %q, want a.png", got)
	}

	q := publication(s.Owner, id('b'), at)
	if err := s.Store.Create(ctx, q, []note.StoredImage{image(q, "b.png", 1)}, "gone", created(q)); !errors.Is(err, note.ErrUploadExpired) {
		t.Errorf("Create without its reservation: %v, want ErrUploadExpired", err)
	}
	if _, err := s.Store.FindView(ctx, q.CUID); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("a failed Create stored the publication: %v", err)
	}
}

func pathTaken(t *testing.T, s Subject) {
	ctx := t.Context()
	path := "Garden/Ünïcode Plan.md"
	a := publication(s.Owner, id('a'), at)
	a.Path = &path
	s.create(t, a)
	var taken *note.PathTakenError

	b := publication(s.Owner, id('b'), at)
	b.Path = new("GARDEN/ünïcode plan.md")
	if err := s.Store.Create(ctx, b, nil, "", created(b)); !errors.As(err, &taken) || taken.Holder != a.CUID {
		t.Fatalf("Create with a path taken (by match key): %v, want a PathTakenError naming %s", err, a.CUID)
	}
	if _, err := s.Store.FindView(ctx, b.CUID); !errors.Is(err, note.ErrNotFound) {
		t.Errorf("a refused Create stored the publication: %v", err)
	}
	b.Path = nil
	s.create(t, b)
	err := s.Store.Commit(ctx, s.edit(t, b.CUID, at, nil, "", func(p *note.Publication) { p.Path = new("garden/ÜNÏCODE PLAN.md") }))
	if !errors.As(err, &taken) || taken.Holder != a.CUID {
		t.Fatalf("Commit of a path taken: %v, want a PathTakenError naming %s", err, a.CUID)
	}
	if got := s.find(t, b.CUID); got.Path != nil || len(s.versions(t, b.CUID)) != 0 {
		t.Errorf("a refused Commit changed the publication: path %v, %d snapshots", got.Path, len(s.versions(t, b.CUID)))
	}

	c := publication(s.Other, id('c'), at)
	c.Path = &path
	s.create(t, c) // Another account's path is its own.
	s.unpublish(t, a.CUID, at)
	if got := s.update(t, b.CUID, at, func(p *note.Publication) { p.Path = &path }); got.Path == nil || *got.Path != path {
		t.Errorf("the path an unpublished note freed: %v", got.Path)
	}
}
