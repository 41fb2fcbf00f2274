package images_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/testkit"
)

// TestImageRanges: small images (held by the read cache) and large ones (streamed from
// the object store) answer Range requests with 206 and If-None-Match with 304.
func TestImageRanges(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		small, large := testkit.PNGOfSize(t, 4000), testkit.PNGOfSize(t, 3_000_000)
		_, paths := f.publish(t, acc, nil, image{"small.png", "image/png", small}, image{"large.png", "image/png", large})
		for i, data := range [][]byte{small, large} {
			t.Run(fmt.Sprint(len(data)), func(t *testing.T) {
				whole := f.get(t, paths[i], nil).Expect(t, http.StatusOK, "")
				if !bytes.Equal(whole.Body, data) || whole.Header.Get("Content-Length") != fmt.Sprint(len(data)) {
					t.Fatalf("GET = %d bytes (Content-Length %s), want the %d uploaded", len(whole.Body), whole.Header.Get("Content-Length"), len(data))
				}
				if whole.Header.Get("Accept-Ranges") != "bytes" {
					t.Errorf("Accept-Ranges = %q", whole.Header.Get("Accept-Ranges"))
				}
				etag := whole.Header.Get("ETag")

				part := f.get(t, paths[i], map[string]string{"Range": "bytes=1000-1999"}).Expect(t, http.StatusPartialContent, "")
				if !bytes.Equal(part.Body, data[1000:2000]) {
					t.Errorf("Range 1000-1999 = %d bytes that differ from the image's", len(part.Body))
				}
				if cr := part.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes 1000-1999/%d", len(data)) {
					t.Errorf("Content-Range = %q", cr)
				}
				tail := f.get(t, paths[i], map[string]string{"Range": "bytes=-10"}).Expect(t, http.StatusPartialContent, "")
				if !bytes.Equal(tail.Body, data[len(data)-10:]) {
					t.Errorf("the last 10 bytes differ")
				}
				f.get(t, paths[i], map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(data)+5)}).Expect(t, http.StatusRequestedRangeNotSatisfiable, "")
				if resp := f.get(t, paths[i], map[string]string{"If-None-Match": etag}); resp.Status != http.StatusNotModified || len(resp.Body) != 0 {
					t.Errorf("If-None-Match = %d with %d bytes, want 304 without a body", resp.Status, len(resp.Body))
				}
			})
		}
	})
}

// TestImagesOfTheDatabaseMigrateToTheStore: images an earlier release kept in the
// database are served from there until `sharenote migrate` copies them into the object
// store, which it does once however often it runs.
func TestImagesOfTheDatabaseMigrateToTheStore(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		images := []image{{"a.png", "image/png", testkit.PNGOfSize(t, 2000)}, {"b.png", "image/png", testkit.PNGOfSize(t, 2_000_000)}}
		_, paths := f.publish(t, acc, nil, images...)
		// Move them back where the earlier release kept them: bytes in the blobs table,
		// none in the store.
		gdb := testkit.OpenDB(t, b)
		var keys []string
		if err := gdb.Table("images").Order("filename").Pluck("blob_key", &keys).Error; err != nil || len(keys) != 2 {
			t.Fatalf("keys %v, %v", keys, err)
		}
		for i, k := range keys {
			if err := gdb.Exec("INSERT INTO blobs (key, data) VALUES (?, ?)", k, images[i].Data).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := testkit.OpenBlobs(t, f.Backend).Delete(context.Background(), keys...); err != nil {
			t.Fatal(err)
		}
		f.App.Deps().Reads.Drop(changefeed.Event{Kind: changefeed.Account, ID: acc.UserCUID})

		// Served from the database meanwhile, whole and in ranges.
		for i, p := range paths {
			if resp := f.get(t, p, nil).Expect(t, http.StatusOK, ""); !bytes.Equal(resp.Body, images[i].Data) {
				t.Errorf("%s from the database: %d bytes that differ", images[i].Filename, len(resp.Body))
			}
		}
		part := f.get(t, paths[1], map[string]string{"Range": "bytes=10-19"}).Expect(t, http.StatusPartialContent, "")
		if !bytes.Equal(part.Body, images[1].Data[10:20]) {
			t.Error("a range of an image in the database differs")
		}

		migrate := func() map[string]any {
			code, out, logs := testkit.Run(t, b, operator, nil, "migrate")
			if code != 0 {
				t.Fatalf("migrate: exit %d: %s", code, logs)
			}
			var summary map[string]any
			if err := json.Unmarshal([]byte(out), &summary); err != nil {
				t.Fatalf("migrate printed %q: %v", out, err)
			}
			return summary
		}
		total := float64(len(images[0].Data) + len(images[1].Data))
		if s := migrate(); s["images_copied"] != 2.0 || s["bytes_copied"] != total || s["images_skipped"] != 0.0 {
			t.Errorf("first migrate: %v, want 2 images of %v bytes copied", s, total)
		}
		if s := migrate(); s["images_copied"] != 0.0 || s["images_skipped"] != 2.0 {
			t.Errorf("second migrate: %v, want both skipped", s)
		}
		// Every image is in the store now, byte for byte.
		for i, k := range keys {
			rc, _, err := testkit.OpenBlobs(t, f.Backend).Get(context.Background(), k, 0, -1)
			if err != nil {
				t.Fatalf("object %s: %v", k, err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || !bytes.Equal(data, images[i].Data) {
				t.Errorf("object %s: %d bytes (%v) that differ from the image's", k, len(data), err)
			}
		}
		// And served from there once the database's copy is gone.
		if err := gdb.Exec("DELETE FROM blobs").Error; err != nil {
			t.Fatal(err)
		}
		f.App.Deps().Reads.Drop(changefeed.Event{Kind: changefeed.Account, ID: acc.UserCUID})
		for i, p := range paths {
			if resp := f.get(t, p, nil).Expect(t, http.StatusOK, ""); !bytes.Equal(resp.Body, images[i].Data) {
				t.Errorf("%s from the store: %d bytes that differ", images[i].Filename, len(resp.Body))
			}
		}
	})
}
