package note_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
)

func TestUpdateIfMatch(t *testing.T) {
	cases := []struct {
		name    string
		ifMatch func(etag string) []string
		stale   bool
	}{
		{"no If-Match updates whatever the etag", func(string) []string { return nil }, false},
		{"the current etag updates", func(etag string) []string { return []string{etag} }, false},
		{"a list holding the current etag updates", func(etag string) []string { return []string{"old", etag} }, false},
		{"* updates whatever the etag", func(string) []string { return []string{"*"} }, false},
		{"another etag is ErrStale and changes nothing", func(string) []string { return []string{"old"} }, true},
		{"a list without the current etag is ErrStale and changes nothing", func(string) []string { return []string{"old", "older"} }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 0)
			p := h.publish(t, "Title", "first [[Other]]")
			before := h.stored(t, p.CUID)
			h.settle()

			content := "second"
			got, err := h.pub.Update(context.Background(), author, p.CUID,
				note.Patch{Content: &content, Title: note.Optional[string]{Set: true, Value: new("New title")}, IfMatch: tc.ifMatch(p.ETag)})
			after := h.stored(t, p.CUID)
			if !tc.stale {
				if err != nil {
					t.Fatalf("update: %v", err)
				}
				if after.Content != "second" || got.ETag == p.ETag || after.ETag != got.ETag || h.store.versionCount(p.CUID) != 1 {
					t.Fatalf("update not applied: content %q etag %q (was %q, returned %q), %d versions",
						after.Content, after.ETag, p.ETag, got.ETag, h.store.versionCount(p.CUID))
				}
				return
			}
			if !errors.Is(err, note.ErrStale) {
				t.Fatalf("update = %v, want ErrStale", err)
			}
			if !reflect.DeepEqual(after, before) {
				t.Errorf("a stale update changed the publication:\n got %+v\nwant %+v", after, before)
			}
			if n := h.store.versionCount(p.CUID); n != 0 {
				t.Errorf("a stale update stored %d snapshots", n)
			}
			if r := h.renderer.rendered(); len(r) != 0 {
				t.Errorf("a stale update rendered %q", r)
			}
			if h.notifier.calls != nil {
				t.Errorf("a stale update notified %q", h.notifier.calls)
			}
		})
	}
}

func TestUpdateExpiryReactivates(t *testing.T) {
	later := start.Add(48 * time.Hour)
	cases := []struct {
		name   string
		patch  note.Patch
		status note.Status
	}{
		{"a future expiry makes an expired note active", note.Patch{ExpiresAt: note.Optional[time.Time]{Set: true, Value: &later}}, note.Active},
		{"clearing the expiry makes an expired note active", note.Patch{ExpiresAt: note.Optional[time.Time]{Set: true}}, note.Active},
		{"a patch that leaves the expiry leaves an expired note expired", note.Patch{Summary: note.Optional[string]{Set: true, Value: new("s")}}, note.Expired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 0)
			expires := start.Add(time.Hour)
			p, err := h.pub.Publish(context.Background(), author, note.Draft{Content: "body", Title: new("Soon"), ExpiresAt: &expires})
			if err != nil {
				t.Fatal(err)
			}
			h.clock.Advance(2 * time.Hour)
			if _, err := h.read.ReadView(context.Background(), p.CUID); !errors.Is(err, note.ErrNotFound) {
				t.Fatalf("read of an expired note = %v, want ErrNotFound", err)
			}

			got := h.update(t, p.CUID, tc.patch)
			if s := got.Status(h.clock.Now()); s != tc.status {
				t.Fatalf("status after the patch = %s, want %s", s, tc.status)
			}
			_, err = h.read.ReadView(context.Background(), p.CUID)
			if tc.status == note.Active && err != nil {
				t.Fatalf("read after the patch = %v, want the note", err)
			}
			if tc.status == note.Expired && !errors.Is(err, note.ErrNotFound) {
				t.Fatalf("read after the patch = %v, want ErrNotFound", err)
			}
		})
	}
}
