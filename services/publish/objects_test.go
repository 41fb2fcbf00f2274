package publish_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/testkit"
)

// readBack reads an image's bytes from the store, as the image route does.
func (f *fixture) readBack(t *testing.T, acc testkit.Account, cuid, name string) []byte {
	t.Helper()
	ctx := context.Background()
	iv, err := testkit.Must(f.App.Deps().Images()).ReadImage(ctx, acc.UserCUID, cuid, name)
	if err != nil {
		t.Fatalf("read image %s: %v", name, err)
	}
	rc, err := testkit.Must(f.App.Deps().Images()).OpenImage(ctx, iv.Image, 0, -1)
	if err != nil {
		t.Fatalf("open image %s: %v", name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// reap runs `sharenote reap` against the server's database and object store and returns
// what it printed.
func (f *fixture) reap(t *testing.T, b testkit.Backend, args ...string) string {
	t.Helper()
	code, out, logs := testkit.Run(t, b, app.Program{Name: "sharenote"}, nil, append([]string{"reap"}, args...)...)
	if code != 0 {
		t.Fatalf("reap: exit %d: %s", code, logs)
	}
	return out
}

func TestImagesLiveInTheObjectStore(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "author")
		one, two := testkit.PNGOfSize(t, 3000), testkit.PNGOfSize(t, 1_500_000)
		id := f.published(t, f.multipart(t, acc.Token, field("content", "![[one.png]] ![[two.png]]"),
			file("one.png", "image/png", one), file("two.png", "image/png", two)))

		objs := f.objects(t, acc)
		sizes := map[int64]bool{}
		for _, o := range objs {
			if !strings.HasPrefix(o.Key, acc.UserCUID+"/"+id+"/") {
				t.Errorf("object %s is not under <user>/<note>/", o.Key)
			}
			sizes[o.Size] = true
		}
		if len(objs) != 2 || !sizes[int64(len(one))] || !sizes[int64(len(two))] {
			t.Fatalf("objects %+v, want two of %d and %d bytes", objs, len(one), len(two))
		}
		if n := f.rows(t, "blobs", nil); n != 0 {
			t.Errorf("%d image byte rows in the database, want none", n)
		}
		if got := f.readBack(t, acc, id, "one.png"); !bytes.Equal(got, one) {
			t.Errorf("one.png reads back %d bytes that differ from the %d sent", len(got), len(one))
		}
		if got := f.readBack(t, acc, id, "two.png"); !bytes.Equal(got, two) {
			t.Errorf("two.png reads back %d bytes that differ from the %d sent", len(got), len(two))
		}

		if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, id); err != nil {
			t.Fatal(err)
		}
		if out := f.reap(t, b); !strings.Contains(out, `"images":2`) || !strings.Contains(out, fmt.Sprintf(`"bytes":%d`, len(one)+len(two))) {
			t.Errorf("reap printed %s, want 2 images of %d bytes", out, len(one)+len(two))
		}
		if objs := f.objects(t, acc); len(objs) != 0 {
			t.Errorf("after unpublish and reap the store keeps %v", objs)
		}
	})
}

// TestCancelledUploadLeavesNothing hangs up in the middle of an image: no publication,
// no image row, no object, nothing reserved.
func TestCancelledUploadLeavesNothing(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "author")
		body, contentType := multipartBody(t, field("content", "![[a.png]] ![[b.png]]"),
			file("a.png", "image/png", testkit.PNGOfSize(t, 2_500_000)), file("b.png", "image/png", testkit.PNGOfSize(t, 2_000_000)))
		conn, err := net.Dial("tcp", strings.TrimPrefix(f.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /api/publish HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
			acc.Token, contentType, len(body))
		// All of the first image (stored by now) and half of the second.
		if _, err := conn.Write(body[:len(body)-1_000_000]); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for f.rows(t, "image_reservations", &acc) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if f.rows(t, "image_reservations", &acc) == 0 {
			t.Fatal("the upload never reserved quota: it did not reach the store")
		}
		_ = conn.Close()
		for time.Now().Before(deadline) && (f.rows(t, "image_reservations", &acc) != 0 || len(f.objects(t, acc)) != 0) {
			time.Sleep(20 * time.Millisecond)
		}
		f.storedNothing(t, acc)
	})
}

// TestAnUploadThatDiedIsReaped: a process that dies mid-upload cannot undo it; once the
// reservation is older than an upload may take, the reaper releases its quota and
// deletes its objects, and the upload could no longer commit.
func TestAnUploadThatDiedIsReaped(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "author")
		notes := testkit.Must(f.App.Deps().Publisher())
		up := notes.NewUpload(acc.UserCUID)
		img := testkit.PNGOfSize(t, 5000)
		if err := up.Add(context.Background(), "a.png", "image/png", bytes.NewReader(img)); err != nil {
			t.Fatal(err)
		}
		if n := f.usage(t, acc); n != int64(len(img)) {
			t.Fatalf("usage %d during the upload, want the %d bytes reserved", n, len(img))
		}
		if out := f.reap(t, b); !strings.Contains(out, `"reservations":0`) || !strings.Contains(out, `"orphans":0`) {
			t.Errorf("a live upload was reaped: %s", out)
		}

		f.clock.Advance(note.UploadTimeout + time.Minute)
		// The reaper of a serving process reads the server's clock.
		r, err := note.NewReaper(notedb.New(testkit.OpenDB(t, b), testkit.Changes()), testkit.OpenBlobs(t, f.Backend)).ReleaseExpired(context.Background(), f.clock.Now(), 10)
		if err != nil || r.Reservations != 1 || r.Objects != 1 || r.Bytes != int64(len(img)) {
			t.Fatalf("ReleaseExpired = %+v, %v; want 1 reservation and its object of %d bytes", r, err, len(img))
		}
		f.storedNothing(t, acc)
		_, err = notes.Publish(context.Background(), acc.UserCUID, note.Draft{Content: "![[a.png]]", Upload: up})
		if err == nil || !strings.Contains(err.Error(), note.ErrUploadExpired.Error()) {
			t.Fatalf("publishing the reaped upload: %v, want %v", err, note.ErrUploadExpired)
		}
		f.storedNothing(t, acc)
	})
}

// TestOrphanSweep deletes old objects that no image row names and no upload is writing,
// and keeps the rest.
func TestOrphanSweep(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "author")
		ctx := context.Background()
		id := f.published(t, f.multipart(t, acc.Token, field("content", "![[kept.png]]"), file("kept.png", "image/png", testkit.PNG(t))))
		live := testkit.Must(f.App.Deps().Publisher()).NewUpload(acc.UserCUID)
		if err := live.Add(ctx, "live.png", "image/png", bytes.NewReader(testkit.PNG(t))); err != nil {
			t.Fatal(err)
		}
		orphan := acc.UserCUID + "/" + strings.Repeat("o", 24) + "/" + strings.Repeat("x", 24)
		if _, err := testkit.OpenBlobs(t, f.Backend).Put(ctx, orphan, strings.NewReader("left behind"), -1, "image/png"); err != nil {
			t.Fatal(err)
		}
		store := note.NewReaper(notedb.New(testkit.OpenDB(t, b), testkit.Changes()), testkit.OpenBlobs(t, f.Backend))
		// Younger than the grace period: kept.
		if r, err := store.SweepOrphans(ctx, time.Now().Add(-time.Hour)); err != nil || r.Objects != 0 {
			t.Fatalf("SweepOrphans of old objects = %+v, %v; want nothing deleted", r, err)
		}
		r, err := store.SweepOrphans(ctx, time.Now().Add(time.Minute))
		if err != nil || r.Objects != 1 || r.Bytes != int64(len("left behind")) {
			t.Fatalf("SweepOrphans = %+v, %v; want the one orphan", r, err)
		}
		if objs := f.objects(t, acc); len(objs) != 2 {
			t.Errorf("after the sweep the store keeps %v, want the published and the uploading image", objs)
		}
		if got := f.readBack(t, acc, id, "kept.png"); !bytes.Equal(got, testkit.PNG(t)) {
			t.Error("the published image changed")
		}
		if err := live.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if out := f.reap(t, b, "--orphans"); !strings.Contains(out, `"orphans":0`) {
			t.Errorf("reap --orphans printed %s: no object is old enough", out)
		}
	})
}

// TestObjectStoreOutage: with the object store down, a publish with images answers 503
// with Retry-After and leaves nothing, and one without images still publishes.
func TestObjectStoreOutage(t *testing.T) {
	minio := testkit.StartMinIO(t)
	b := minio.Backend(t)
	f := start(t, b)
	acc := f.NewAccount(t, "author")
	minio.Stop()
	resp := f.multipart(t, acc.Token, field("content", "![[a.png]]"), file("a.png", "image/png", testkit.PNG(t)))
	resp.Expect(t, http.StatusServiceUnavailable, "service_unavailable")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	f.published(t, f.markdown(t, acc.Token, "# No images", nil))
	minio.Start()
	if n := f.rows(t, "images", &acc); n != 0 {
		t.Errorf("%d image rows after the failed publish", n)
	}
	if objs := f.objects(t, acc); len(objs) != 0 {
		t.Errorf("objects %v after the failed publish", objs)
	}
	if n := f.usage(t, acc); n != 0 {
		t.Errorf("image_bytes_used = %d after the failed publish, want 0", n)
	}
	if n := f.rows(t, "image_reservations", &acc); n != 0 {
		t.Errorf("%d reservations left", n)
	}
	f.published(t, f.multipart(t, acc.Token, field("content", "![[a.png]]"), file("a.png", "image/png", testkit.PNG(t))))
}

// TestObjectStoreStoppedMidPublish stops the store after the first of two images is
// stored: the publish answers 503, nothing becomes visible, and what the failed publish
// could not delete while the store was down (its first object, still under its
// reservation) the reaper deletes once the reservation is older than an upload may take.
func TestObjectStoreStoppedMidPublish(t *testing.T) {
	minio := testkit.StartMinIO(t)
	b := minio.Backend(t)
	f := start(t, b)
	acc := f.NewAccount(t, "author")
	body, contentType := multipartBody(t, field("content", "![[a.png]] ![[b.png]]"),
		file("a.png", "image/png", testkit.PNGOfSize(t, 300_000)), file("b.png", "image/png", testkit.PNGOfSize(t, 300_000)))
	second := bytes.Index(body, []byte(`filename="b.png"`))
	pr, pw := io.Pipe()
	req, err := http.NewRequest("POST", f.URL+"/api/publish", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+acc.Token)
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
		}
		answered <- resp
	}()
	if _, err := pw.Write(body[:second]); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); len(f.objects(t, acc)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first image never reached the store")
		}
	}
	minio.Stop()
	_, _ = pw.Write(body[second:])
	_ = pw.Close()
	resp := <-answered
	if resp == nil {
		t.FailNow()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("publish with the store stopped = %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if n := f.rows(t, "publications", &acc); n != 0 {
		t.Errorf("%d publications visible", n)
	}
	if n := f.rows(t, "images", &acc); n != 0 {
		t.Errorf("%d image rows visible", n)
	}

	minio.Start()
	f.clock.Advance(note.UploadTimeout + time.Minute)
	r, err := note.NewReaper(notedb.New(testkit.OpenDB(t, b), testkit.Changes()), testkit.OpenBlobs(t, f.Backend)).ReleaseExpired(context.Background(), f.clock.Now(), 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after the outage the reaper released %d reservations and %d objects", r.Reservations, r.Objects)
	f.storedNothing(t, acc)
}

// TestPublishWarnsOfBrokenImageReferences: an image reference that names no uploaded
// image and an uploaded image the note does not show are published, with a warning each
// that names the spot; a link to another note is no image reference (but a link to a
// note the author has not published is a warning of its own, as is a formula that is
// not TeX, shown as its source).
func TestPublishWarnsOfBrokenImageReferences(t *testing.T) {
	f := start(t, testkit.SQLiteBackend(t))
	acc := f.NewAccount(t, "author")
	resp := f.multipart(t, acc.Token, field("content", "![[shown.png]] ![[missing.png]] ![[missing.png]] [[gone.jpg|200]] [[Another note]] $\\frac{$"),
		file("shown.png", "image/png", testkit.PNG(t)), file("spare.png", "image/png", testkit.PNG(t)))
	f.published(t, resp)
	var body struct {
		Warnings []struct{ Code, Message, Ref string }
	}
	resp.Decode(t, &body)
	got := map[string]string{}
	for _, w := range body.Warnings {
		got[w.Ref] = w.Code
		if w.Message == "" {
			t.Errorf("warning %+v has no message", w)
		}
	}
	want := map[string]string{"missing.png": "unresolved_reference", "gone.jpg": "unresolved_reference", "spare.png": "unused_image",
		"Another note": "unknown_note_link", `$\frac{$`: "render_fallback"}
	if len(body.Warnings) != len(want) {
		t.Errorf("warnings %+v, want exactly %v", body.Warnings, want)
	}
	for ref, code := range want {
		if got[ref] != code {
			t.Errorf("warning for %q = %q, want %q (all: %+v)", ref, got[ref], code, body.Warnings)
		}
	}
	// A clean note has none.
	f.published(t, f.json(t, acc.Token, `{"title": "Another note", "content": "Here."}`))
	clean := f.markdown(t, acc.Token, "# Clean\n\n[[Another note]]", nil)
	f.published(t, clean)
	if clean.Decode(t, &body); len(body.Warnings) != 0 {
		t.Errorf("a clean note got warnings %+v", body.Warnings)
	}
}
