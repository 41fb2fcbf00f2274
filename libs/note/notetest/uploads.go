package notetest

import (
	"errors"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
)

// The contract's cases of uploads' reservations and image reads.

func reserveAndRelease(t *testing.T, s Subject) {
	ctx := t.Context()
	reserve := func(rid, account string, create bool, bytes int64) error {
		return s.Store.Reserve(ctx, note.Reservation{ID: rid, Note: id('a'), Account: account, Create: create, Bytes: bytes, Images: 1, Quota: 1000, Expires: at.Add(time.Hour)})
	}
	for _, step := range []struct {
		name string
		do   func() error
		want error
	}{
		{"600 of 1000 bytes", func() error { return reserve("r1", s.Owner, true, 600) }, nil},
		{"500 more would pass the quota", func() error { return reserve("r2", s.Owner, true, 500) }, note.ErrQuotaExceeded},
		{"a refused reservation is not made", func() error { return reserve("r2", s.Owner, false, 0) }, note.ErrUploadExpired},
		{"400 more to r1 reach the quota", func() error { return reserve("r1", s.Owner, false, 400) }, nil},
		{"1 more would pass it", func() error { return reserve("r3", s.Owner, true, 1) }, note.ErrQuotaExceeded},
		{"another account's quota is its own", func() error { return reserve("r4", s.Other, true, 1000) }, nil},
		{"Release gives r1's bytes back", func() error { return s.Store.Release(ctx, "r1") }, nil},
		{"releasing r1 again does nothing", func() error { return s.Store.Release(ctx, "r1") }, nil},
		{"releasing what was never reserved does nothing", func() error { return s.Store.Release(ctx, "never") }, nil},
		{"a released reservation is gone", func() error { return reserve("r1", s.Owner, false, 1) }, note.ErrUploadExpired},
		{"the whole quota is free", func() error { return reserve("r5", s.Owner, true, 1000) }, nil},
		{"and free once: 1 more would pass it", func() error { return reserve("r6", s.Owner, true, 1) }, note.ErrQuotaExceeded},
	} {
		if err := step.do(); !errors.Is(err, step.want) {
			t.Fatalf("%s: %v, want %v", step.name, err, step.want)
		}
	}
}

func reserveTooManyImages(t *testing.T, s Subject) {
	ctx := t.Context()
	reserve := func(rid string, images int) error {
		return s.Store.Reserve(ctx, note.Reservation{ID: rid, Note: id('a'), Account: s.Owner, Create: true, Bytes: int64(images), Images: images, Quota: quota, Expires: at.Add(time.Hour)})
	}
	tooMany := func(err error) bool {
		var e *note.TooManyImagesError
		return errors.As(err, &e) && e.PerAccount && e.Limit == note.MaxImagesPerAccount
	}
	if err := reserve("r1", note.MaxImagesPerAccount+1); !tooMany(err) {
		t.Errorf("one image past the limit: %v, want a TooManyImagesError of the account", err)
	}
	if err := reserve("r1", note.MaxImagesPerAccount); err != nil {
		t.Fatalf("as many images as the limit: %v", err)
	}
	if err := reserve("r2", 1); !tooMany(err) {
		t.Errorf("one image more: %v, want a TooManyImagesError of the account", err)
	}
	if err := s.Store.Release(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := reserve("r2", 1); err != nil {
		t.Errorf("one image after the Release: %v", err)
	}
}

func findImageView(t *testing.T, s Subject) {
	ctx := t.Context()
	p := publication(s.Owner, id('a'), at)
	p.ExpiresAt, p.UpdatedAt = new(at.Add(time.Hour)), at.Add(time.Second)
	img := image(p, "a.png", 3)
	s.create(t, p, img)
	iv, err := s.Store.FindImageView(ctx, s.Owner, p.CUID, "a.png")
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(iv.Image, img); d != "" {
		t.Errorf("the image:%s", d)
	}
	want := note.Publication{CUID: p.CUID, AccountCUID: p.AccountCUID, Text: note.Text{ExpiresAt: p.ExpiresAt},
		UpdatedAt: p.UpdatedAt, ETag: p.ETag}
	if d := diff(iv.Note.Publication, want); d != "" {
		t.Errorf("the publication is not its state alone:%s", d)
	}
	if iv.Note.Owner != s.Settings {
		t.Errorf("owner's settings %+v, want %+v", iv.Note.Owner, s.Settings)
	}
	for _, c := range []struct{ name, account, cuid, filename string }{
		{"another name", s.Owner, p.CUID, "b.png"},
		{"another account", s.Other, p.CUID, "a.png"},
		{"another note", s.Owner, id('z'), "a.png"},
	} {
		if _, err := s.Store.FindImageView(ctx, c.account, c.cuid, c.filename); !errors.Is(err, note.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", c.name, err)
		}
	}
}
