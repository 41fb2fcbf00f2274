package note_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
)

// renderPending runs the background renderer and fails the test on an error.
func (h *harness) renderPending(t *testing.T) {
	t.Helper()
	if err := h.renders.RenderPending(context.Background()); err != nil {
		t.Fatalf("RenderPending: %v", err)
	}
}

// wantRendered fails the test unless the renders since the last settle were of want.
func (h *harness) wantRendered(t *testing.T, why string, want ...string) {
	t.Helper()
	if got := h.renderer.rendered(); !slices.Equal(got, want) {
		t.Errorf("%s: rendered %q, want %q", why, got, want)
	}
	h.settle()
}

func TestRenderOnce(t *testing.T) {
	ctx := context.Background()
	t.Run("a publish renders once and is not rendered again", func(t *testing.T) {
		h := newHarness(t, 0)
		p := h.publish(t, "T", "body")
		h.wantRendered(t, "publish", "body")
		if s := h.stored(t, p.CUID); s.RenderVersion != 1 || s.HTML != `<p data-v="1">body</p>` || s.RenderID == "" {
			t.Fatalf("stored render: version %d, HTML %q, id %q", s.RenderVersion, s.HTML, s.RenderID)
		}
		h.renderPending(t)
		h.wantRendered(t, "RenderPending after a final render")
	})
	t.Run("a PATCH without content renders nothing and keeps the render", func(t *testing.T) {
		h := newHarness(t, 0)
		p := h.publish(t, "T", "body")
		h.settle()
		h.update(t, p.CUID, note.Patch{Title: note.Optional[string]{Set: true, Value: new("U")}, Summary: note.Optional[string]{Set: true, Value: new("s")},
			ShowProperties: new(true), ExpiresAt: note.Optional[time.Time]{Set: true, Value: new(start.Add(time.Hour))}})
		h.renderPending(t)
		h.wantRendered(t, "PATCH without content")
		if s := h.stored(t, p.CUID); s.RenderID != p.RenderID || s.HTML != p.HTML {
			t.Fatalf("the render changed: id %q→%q", p.RenderID, s.RenderID)
		}
	})
	t.Run("a PATCH with content renders it once", func(t *testing.T) {
		h := newHarness(t, 0)
		p := h.publish(t, "T", "body")
		h.settle()
		h.update(t, p.CUID, note.Patch{Content: new("new body")})
		h.renderPending(t)
		h.wantRendered(t, "PATCH with content", "new body")
	})
	t.Run("reads never render", func(t *testing.T) {
		h := newHarness(t, 0)
		h.renderer.miss(note.MissBusy)
		p := h.publish(t, "T", "see [[T]]") // temporary: the background owes a render
		h.renderer.upgrade()                // and the renderer is newer than the render
		h.settle()
		for range 3 {
			if _, err := h.read.ReadView(ctx, p.CUID); err != nil {
				t.Fatal(err)
			}
			if _, err := h.read.ReadPage(ctx, p.CUID); err != nil {
				t.Fatal(err)
			}
		}
		h.wantRendered(t, "ReadView and ReadPage")
		if s := h.stored(t, p.CUID); s.RenderVersion != 0 {
			t.Fatalf("a read stored a render of version %d", s.RenderVersion)
		}
	})
	t.Run("RenderPending renders an older renderer's render once", func(t *testing.T) {
		h := newHarness(t, 0)
		p := h.publish(t, "T", "body")
		h.renderer.upgrade()
		h.settle()
		h.renderPending(t)
		h.wantRendered(t, "first RenderPending", "body")
		if s := h.stored(t, p.CUID); s.RenderVersion != 2 || s.HTML != `<p data-v="2">body</p>` {
			t.Fatalf("after RenderPending: version %d, HTML %q", s.RenderVersion, s.HTML)
		}
		if h.notifier.count("note "+p.CUID) != 0 {
			t.Fatal("settle did not reset")
		}
		h.renderPending(t)
		h.clock.Advance(time.Hour) // past any lease
		h.renderPending(t)
		h.wantRendered(t, "second RenderPending")
	})
	t.Run("a stored render of the background is told to every process", func(t *testing.T) {
		h := newHarness(t, 0)
		p := h.publish(t, "T", "body")
		h.renderer.upgrade()
		h.settle()
		h.renderPending(t)
		if n := h.notifier.count("note " + p.CUID); n != 1 {
			t.Fatalf("the note's change told %d times, want 1", n)
		}
	})
	t.Run("a note being rendered is not rendered by another process", func(t *testing.T) {
		h := newHarness(t, 0)
		h.publish(t, "T", "body")
		h.renderer.upgrade()
		h.settle()
		// A second process on the same store, whose RenderPending runs while the first
		// renders.
		other := &fakeRenderer{version: 2}
		second := note.NewRenders(h.store, other, note.Config{Now: h.clock.Now, PublicURL: publicURL})
		h.renderer.during = func() {
			if err := second.RenderPending(ctx); err != nil {
				t.Errorf("the second RenderPending: %v", err)
			}
		}
		h.renderPending(t)
		h.wantRendered(t, "the first process", "body")
		if got := other.rendered(); len(got) != 0 {
			t.Fatalf("the second process rendered %q too", got)
		}
	})
	t.Run("a claimed note is not rendered by another run before its lease ends", func(t *testing.T) {
		h := newHarness(t, 0)
		p := h.publish(t, "T", "body")
		h.renderer.upgrade()
		h.settle()
		// Another process claimed it and has not stored its render yet.
		if got, _ := h.store.ClaimRenders(ctx, 2, h.clock.Now(), h.clock.Now().Add(time.Minute), 8); !slices.Equal(got, []string{p.CUID}) {
			t.Fatalf("claimed %q", got)
		}
		h.renderPending(t)
		h.wantRendered(t, "RenderPending within another's lease")
		h.clock.Advance(time.Minute)
		h.renderPending(t)
		h.wantRendered(t, "RenderPending after the lease", "body")
	})
}

func TestTemporaryRenders(t *testing.T) {
	t.Run("a busy renderer's render is stored with version 0 and retried once due", func(t *testing.T) {
		h := newHarness(t, 0)
		h.renderer.miss(note.MissBusy)
		p := h.publish(t, "T", "body")
		s := h.stored(t, p.CUID)
		if s.RenderVersion != 0 || s.RenderTries != 1 || s.RenderMisses != 0 || !s.RenderRetry.After(start) || s.HTML != "<pre>body</pre>" {
			t.Fatalf("temporary render stored as version %d, tries %d, misses %d, retry %v, HTML %q",
				s.RenderVersion, s.RenderTries, s.RenderMisses, s.RenderRetry, s.HTML)
		}
		if !slices.ContainsFunc(p.Warnings, func(w note.Warning) bool {
			return w.Code == note.WarnRenderFallback && strings.Contains(w.Message, "for now")
		}) {
			t.Errorf("warnings %+v lack the temporary render's", p.Warnings)
		}
		h.settle()
		h.renderPending(t)
		h.wantRendered(t, "RenderPending before the retry time")
		h.clock.Advance(time.Second)
		h.renderPending(t)
		h.wantRendered(t, "RenderPending at the retry time", "body")
		if s := h.stored(t, p.CUID); s.RenderVersion != 1 || s.RenderTries != 0 || !s.RenderRetry.IsZero() || s.HTML != `<p data-v="1">body</p>` {
			t.Fatalf("after the retry: version %d, tries %d, retry %v, HTML %q", s.RenderVersion, s.RenderTries, s.RenderRetry, s.HTML)
		}
		h.clock.Advance(time.Hour)
		h.renderPending(t)
		h.wantRendered(t, "RenderPending after the final render")
	})
	t.Run("a busy renderer again backs off", func(t *testing.T) {
		h := newHarness(t, 0)
		h.renderer.miss(note.MissBusy, note.MissBusy)
		p := h.publish(t, "T", "body")
		h.clock.Advance(time.Second)
		h.renderPending(t)
		s := h.stored(t, p.CUID)
		if s.RenderVersion != 0 || s.RenderTries != 2 || !s.RenderRetry.After(h.clock.Now().Add(time.Second)) {
			t.Fatalf("second temporary render: version %d, tries %d, retry in %v", s.RenderVersion, s.RenderTries, s.RenderRetry.Sub(h.clock.Now()))
		}
	})
	t.Run("a note that misses its own bound twice is final as text", func(t *testing.T) {
		h := newHarness(t, 0)
		h.renderer.miss(note.MissDeadline, note.MissDeadline)
		p := h.publish(t, "T", "body")
		if s := h.stored(t, p.CUID); s.RenderVersion != 0 || s.RenderMisses != 1 {
			t.Fatalf("first miss stored as version %d with %d misses, want temporary", s.RenderVersion, s.RenderMisses)
		}
		h.clock.Advance(time.Second)
		h.settle()
		h.renderPending(t)
		h.wantRendered(t, "the retry", "body")
		s := h.stored(t, p.CUID)
		if s.RenderVersion != 1 || s.HTML != "<pre>body</pre>" || s.RenderMisses != 0 || !s.RenderRetry.IsZero() {
			t.Fatalf("second miss stored as version %d, HTML %q, misses %d, retry %v; want final", s.RenderVersion, s.HTML, s.RenderMisses, s.RenderRetry)
		}
		h.clock.Advance(time.Hour)
		h.renderPending(t)
		h.wantRendered(t, "after the final text")
	})
	t.Run("a new content starts the misses again", func(t *testing.T) {
		h := newHarness(t, 0)
		h.renderer.miss(note.MissDeadline, note.MissDeadline)
		p := h.publish(t, "T", "body")
		h.update(t, p.CUID, note.Patch{Content: new("other")})
		if s := h.stored(t, p.CUID); s.RenderVersion != 0 || s.RenderMisses != 1 {
			t.Fatalf("a new content's first miss stored as version %d with %d misses, want temporary", s.RenderVersion, s.RenderMisses)
		}
	})
	t.Run("a temporary render never replaces an older renderer's real render", func(t *testing.T) {
		h := newHarness(t, 0)
		p := h.publish(t, "T", "body")
		h.renderer.upgrade(note.MissBusy)
		h.settle()
		h.renderPending(t)
		if n := h.notifier.count("note " + p.CUID); n != 0 {
			t.Errorf("the note's change told %d times for a render that changed nothing", n)
		}
		h.wantRendered(t, "RenderPending with a busy renderer", "body")
		s := h.stored(t, p.CUID)
		if s.HTML != `<p data-v="1">body</p>` || s.RenderVersion != 1 || s.RenderID != p.RenderID {
			t.Fatalf("the older render was replaced: version %d, HTML %q", s.RenderVersion, s.HTML)
		}
		if s.RenderTries != 1 || !s.RenderRetry.After(h.clock.Now()) {
			t.Fatalf("the temporary render was not counted: tries %d, retry %v", s.RenderTries, s.RenderRetry)
		}
		h.clock.Advance(time.Second)
		h.renderPending(t)
		h.wantRendered(t, "the retry", "body")
		if s := h.stored(t, p.CUID); s.HTML != `<p data-v="2">body</p>` || s.RenderVersion != 2 {
			t.Fatalf("after the retry: version %d, HTML %q", s.RenderVersion, s.HTML)
		}
	})
}
