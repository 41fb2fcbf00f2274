package note_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
)

// add adds an image of size bytes to u and fails the test on an error.
func add(t *testing.T, u *note.Upload, name string, size int) {
	t.Helper()
	if err := u.Add(context.Background(), name, "image/png", bytes.NewReader(make([]byte, size))); err != nil {
		t.Fatalf("add %s: %v", name, err)
	}
}

func TestUploadSettlesOrAborts(t *testing.T) {
	ctx := context.Background()
	t.Run("a publish settles the reservation: the bytes stay charged, as the images'", func(t *testing.T) {
		h := newHarness(t, 10_000)
		u := h.pub.NewUpload(author)
		add(t, u, "a.png", 1000)
		add(t, u, "b.png", 500)
		if n := h.store.reservationCount(); n != 1 {
			t.Fatalf("%d reservations while uploading, want 1", n)
		}
		p, err := h.pub.Publish(ctx, author, note.Draft{Content: "![[a.png]] ![[b.png]]", Upload: u})
		if err != nil {
			t.Fatal(err)
		}
		if n := h.store.reservationCount(); n != 0 {
			t.Fatalf("%d reservations after the publish, want 0", n)
		}
		if got := h.store.accountUsage(author); got != (usage{bytes: 1500, images: 2}) {
			t.Fatalf("usage %+v, want the images'", got)
		}
		if err := u.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if n := len(h.blobs.keys()); n != 2 {
			t.Fatalf("an Abort after the publish left %d objects, want the 2 images", n)
		}
		iv, err := h.images.ReadImage(ctx, author, p.CUID, "a.png")
		if err != nil || iv.Image.Size != 1000 {
			t.Fatalf("ReadImage = %+v, %v", iv.Image, err)
		}
		rc, err := h.images.OpenImage(ctx, iv.Image, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		if b, _ := io.ReadAll(rc); len(b) != 1000 {
			t.Fatalf("OpenImage read %d bytes, want 1000", len(b))
		}
		if !strings.Contains(p.Content, "![a.png]("+publicURL+"/api/images/"+author+"/"+p.CUID+"/a.png)") {
			t.Fatalf("content %q does not show the image by its URL", p.Content)
		}
	})
	t.Run("Abort releases the reservation and deletes the objects", func(t *testing.T) {
		h := newHarness(t, 10_000)
		u := h.pub.NewUpload(author)
		add(t, u, "a.png", 1000)
		add(t, u, "b.png", 500)
		if len(h.blobs.keys()) != 2 || h.store.accountUsage(author).bytes != 1500 {
			t.Fatalf("before Abort: objects %q, usage %+v", h.blobs.keys(), h.store.accountUsage(author))
		}
		if err := u.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if k := h.blobs.keys(); len(k) != 0 {
			t.Fatalf("Abort left objects %q", k)
		}
		if got, n := h.store.accountUsage(author), h.store.reservationCount(); got != (usage{}) || n != 0 {
			t.Fatalf("after Abort: usage %+v, %d reservations; want none", got, n)
		}
	})
	t.Run("a refused image is aborted with what came before it", func(t *testing.T) {
		h := newHarness(t, 1500)
		u := h.pub.NewUpload(author)
		add(t, u, "a.png", 1000)
		if err := u.Add(ctx, "b.png", "image/png", bytes.NewReader(make([]byte, 501))); !errors.Is(err, note.ErrQuotaExceeded) {
			t.Fatalf("add over the quota = %v, want ErrQuotaExceeded", err)
		}
		if got := h.store.accountUsage(author); got.bytes != 1000 {
			t.Fatalf("usage %+v after a refusal, want the first image's 1000 bytes", got)
		}
		if err := u.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if k, got := h.blobs.keys(), h.store.accountUsage(author); len(k) != 0 || got != (usage{}) {
			t.Fatalf("after Abort: objects %q, usage %+v", k, got)
		}
	})
	t.Run("a publish whose reservation the reaper released fails and stores nothing", func(t *testing.T) {
		h := newHarness(t, 10_000)
		u := h.pub.NewUpload(author)
		add(t, u, "a.png", 1000)
		for _, id := range h.store.reservationIDs() { // the reaper's doing
			if err := h.store.Release(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		h.settle()
		if _, err := h.pub.Publish(ctx, author, note.Draft{Content: "![[a.png]]", Title: new("T"), Upload: u}); !errors.Is(err, note.ErrUploadExpired) {
			t.Fatalf("publish = %v, want ErrUploadExpired", err)
		}
		if h.notifier.calls != nil {
			t.Fatalf("a failed publish notified %q", h.notifier.calls)
		}
		if err := u.Abort(ctx); err != nil || len(h.blobs.keys()) != 0 {
			t.Fatalf("Abort = %v, objects left %q", err, h.blobs.keys())
		}
	})
	t.Run("a replacement is charged the difference", func(t *testing.T) {
		h := newHarness(t, 1500)
		u := h.pub.NewUpload(author)
		add(t, u, "a.png", 1000)
		p, err := h.pub.Publish(ctx, author, note.Draft{Content: "![[a.png]]", Upload: u})
		if err != nil {
			t.Fatal(err)
		}
		u = h.pub.NewUploadTo(author, p.CUID)
		add(t, u, "a.png", 1200) // 2200 bytes while uploading, 1200 once committed
		if _, err := h.pub.Update(ctx, author, p.CUID, note.Patch{Upload: u}); err != nil {
			t.Fatal(err)
		}
		if got, n := h.store.accountUsage(author), h.store.reservationCount(); got != (usage{bytes: 1200, images: 1}) || n != 0 {
			t.Fatalf("after the replacement: usage %+v, %d reservations", got, n)
		}
	})
}
