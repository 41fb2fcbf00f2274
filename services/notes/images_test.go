package notes_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/testkit"
)

// multipartPatch sends PATCH /api/notes/:cuid as multipart: text fields, then images
// (name → bytes, PNG).
func (f *fixture) multipartPatch(token, cuid, ifMatch string, fields map[string]string, images map[string][]byte) *testkit.Response {
	f.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	for name, data := range images {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+name+`"; filename="`+name+`"`)
		h.Set("Content-Type", "image/png")
		pw, err := w.CreatePart(h)
		if err != nil {
			f.t.Fatal(err)
		}
		_, _ = pw.Write(data)
	}
	_ = w.Close()
	req := testkit.Request{Method: "PATCH", Path: "/api/notes/" + cuid, Token: token, Body: body.Bytes(), ContentType: w.FormDataContentType()}
	if ifMatch != "" {
		req.Header = map[string]string{"If-Match": ifMatch}
	}
	return f.Do(f.t, req)
}

// image reads one of the note's images back from the store.
func (f *fixture) image(cuid, name string) []byte {
	f.t.Helper()
	ctx := context.Background()
	iv, err := testkit.Must(f.App.Deps().Images()).ReadImage(ctx, f.acc.UserCUID, cuid, name)
	if err != nil {
		f.t.Fatalf("image %s: %v", name, err)
	}
	rc, err := testkit.Must(f.App.Deps().Images()).OpenImage(ctx, iv.Image, 0, -1)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rc.Close()
	data, _ := io.ReadAll(rc)
	return data
}

// objects counts the objects the store keeps for the fixture's account.
func (f *fixture) objects() int {
	f.t.Helper()
	n := 0
	if err := testkit.OpenBlobs(f.t, f.Backend).List(context.Background(), f.acc.UserCUID+"/", func(blob.Info) error { n++; return nil }); err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) usage() int64 {
	f.t.Helper()
	s, err := f.App.Deps().Settings.Get(context.Background(), f.acc.UserCUID)
	if err != nil {
		f.t.Fatal(err)
	}
	return s.Storage.ImageBytesUsed
}

// TestMultipartPatchAddsAndReplacesImages: a multipart PATCH adds an image and replaces a
// same-named one; the quota counts the difference, the content resolves against all the
// note's images, one version is made, and the replaced bytes go with the next reap. A
// stale If-Match or a note of another account stores nothing.
func TestMultipartPatchAddsAndReplacesImages(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		oldA, newA, addB := testkit.PNGOfSize(t, 3000), testkit.PNGOfSize(t, 5000), testkit.PNGOfSize(t, 7000)
		up := testkit.Must(f.App.Deps().Publisher()).NewUpload(f.acc.UserCUID)
		if err := up.Add(ctx, "a.png", "image/png", bytes.NewReader(oldA)); err != nil {
			t.Fatal(err)
		}
		id := f.publish(f.acc, note.Draft{Content: "![[a.png]]", Upload: up})
		var first struct{ ETag string }
		f.patch(id, map[string]any{"title": "Pictures"}).Expect(t, http.StatusOK, "").Decode(t, &first)

		resp := f.multipartPatch(f.acc.Token, id, `"`+first.ETag+`"`, map[string]string{"content": "![[a.png]] ![[b.png]]"},
			map[string][]byte{"a.png": newA, "b.png": addB}).Expect(t, http.StatusOK, "")
		var updated struct {
			Content, ETag string
			Title         *string
		}
		resp.Decode(t, &updated)
		if strings.Contains(updated.Content, "[[") || strings.Count(updated.Content, "/api/images/") != 2 || updated.Title == nil || *updated.Title != "Pictures" {
			t.Errorf("after the PATCH: content %q, title %v; want both images resolved and the title kept", updated.Content, updated.Title)
		}
		if got := f.image(id, "a.png"); !bytes.Equal(got, newA) {
			t.Errorf("a.png reads back %d bytes, want the %d of the replacement", len(got), len(newA))
		}
		if got := f.image(id, "b.png"); !bytes.Equal(got, addB) {
			t.Errorf("b.png reads back %d bytes, want %d", len(got), len(addB))
		}
		if n, want := f.usage(), int64(len(newA)+len(addB)); n != want {
			t.Errorf("image_bytes_used = %d, want %d (the replaced image no longer counts)", n, want)
		}
		// Content that stops showing an image is warned of.
		var warned struct{ Warnings []struct{ Code, Ref string } }
		f.patch(id, map[string]any{"content": "![[a.png]] ![[b.png]]\n\nNow ![[a.png]] only? No: [[c.png]]."}).Expect(t, http.StatusOK, "").Decode(t, &warned)
		if len(warned.Warnings) != 1 || warned.Warnings[0].Code != "unresolved_reference" || warned.Warnings[0].Ref != "c.png" {
			t.Errorf("PATCH warnings %+v, want one unresolved_reference for c.png", warned.Warnings)
		}
		f.patch(id, map[string]any{"content": "![[a.png]]"}).Expect(t, http.StatusOK, "").Decode(t, &warned)
		if len(warned.Warnings) != 1 || warned.Warnings[0].Code != "unused_image" || warned.Warnings[0].Ref != "b.png" {
			t.Errorf("PATCH warnings %+v, want one unused_image for b.png", warned.Warnings)
		}
		var versions struct{ Versions []struct{ Version int } }
		f.get("/api/notes/"+id+"/versions", f.acc.Token).Expect(t, http.StatusOK, "").Decode(t, &versions)
		if len(versions.Versions) != 4 {
			t.Errorf("%d versions, want 4 (one per PATCH)", len(versions.Versions))
		}

		// Stale: nothing stored, nothing reserved, nothing charged.
		before, objects := f.usage(), f.objects()
		f.multipartPatch(f.acc.Token, id, `"`+first.ETag+`"`, map[string]string{"title": "Stale"},
			map[string][]byte{"c.png": testkit.PNGOfSize(t, 4000)}).Expect(t, http.StatusPreconditionFailed, "precondition_failed")
		// Another account's note: 404, and its upload is undone too.
		other := f.NewAccount(t, "other")
		f.multipartPatch(other.Token, id, "", nil, map[string][]byte{"d.png": testkit.PNG(t)}).Expect(t, http.StatusNotFound, "not_found")
		if n := f.usage(); n != before {
			t.Errorf("image_bytes_used = %d after refused PATCHes, want %d", n, before)
		}
		if n := f.objects(); n != objects {
			t.Errorf("%d objects after refused PATCHes, want %d", n, objects)
		}
		var reserved int64
		if err := testkit.OpenDB(t, b).Table("image_reservations").Count(&reserved).Error; err != nil || reserved != 0 {
			t.Errorf("%d reservations left (%v)", reserved, err)
		}

		// The replaced a.png is released: the reaper deletes its object.
		r, err := note.NewReaper(notedb.New(testkit.OpenDB(t, b), testkit.Changes()), testkit.OpenBlobs(t, f.Backend)).Reap(ctx, 10, 0)
		if err != nil || r.Images != 1 || r.Bytes != int64(len(oldA)) {
			t.Fatalf("Reap = %+v, %v; want the replaced image of %d bytes", r, err, len(oldA))
		}
		if n := f.objects(); n != 2 {
			t.Errorf("%d objects after the reap, want the 2 served", n)
		}
		if got := f.image(id, "a.png"); !bytes.Equal(got, newA) {
			t.Error("the reap touched the served a.png")
		}
	})
}
