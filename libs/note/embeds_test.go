package note_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
)

// TestReadPageShowsEmbeds: an embed of one of the author's active notes shows its render
// framed with its title; cycles, a fourth level, another author's note and a missing
// part show as links or text; the renders are read once per level.
func TestReadPageShowsEmbeds(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, 0)
	inOne := start.Add(time.Hour)
	if _, err := h.pub.Publish(ctx, author, note.Draft{Content: "d ![[A]]", Title: new("D"), ExpiresAt: &inOne}); err != nil {
		t.Fatal(err)
	}
	h.publish(t, "C", "c ![[D]]")
	h.publish(t, "B", "b ![[C]] ![[B]]")
	h.publish(t, "A", "a ![[B]] ![[C#missing]]")
	if _, err := h.pub.Publish(ctx, "accountother000000000000", note.Draft{Content: "secret", Title: new("Elsewhere")}); err != nil {
		t.Fatal(err)
	}
	page := h.publish(t, "Page", "![[A]] ![[Elsewhere]]")
	reads := h.store.embedReads
	v, err := h.read.ReadPage(ctx, page.CUID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<div title="A" data-url="` + publicURL + `/s/`, // level 1
		`<div title="B"`, // level 2
		`<div title="C"`, // level 3
		`c <a href="`,    // D, a fourth level, is a link
		`>B</a>`,         // B embeds itself: a link
		`>C</a>`,         // C#missing: a link
		` Elsewhere<`,    // another author's note: text
	} {
		if !strings.Contains(v.HTML, want) {
			t.Errorf("page %q lacks %q", v.HTML, want)
		}
	}
	if strings.Contains(v.HTML, "secret") || strings.Contains(v.HTML, `title="D"`) {
		t.Errorf("page %q shows what it must not", v.HTML)
	}
	if got := h.store.embedReads - reads; got != 3 {
		t.Errorf("renders read in %d queries, want one per level (3)", got)
	}
	if len(v.Embeds) != 3 || v.LinksExpireAt == nil || !v.LinksExpireAt.Equal(inOne) {
		t.Errorf("Embeds %v, LinksExpireAt %v: want A, B, C and D's expiry", v.Embeds, v.LinksExpireAt)
	}

	t.Run("a change of an embedded render changes LinksTag", func(t *testing.T) {
		b := h.stored(t, v.Embeds[1])
		h.update(t, b.CUID, note.Patch{Content: new("b, changed ![[C]]")})
		w, err := h.read.ReadPage(ctx, page.CUID)
		if err != nil || w.LinksTag == v.LinksTag || !strings.Contains(w.HTML, "b, changed") {
			t.Fatalf("after B changed: %v, LinksTag %q (was %q), HTML %q", err, w.LinksTag, v.LinksTag, w.HTML)
		}
	})
	t.Run("an unshared embedded note is not shown", func(t *testing.T) {
		if err := h.pub.Unpublish(ctx, author, v.Embeds[0]); err != nil {
			t.Fatal(err)
		}
		w, err := h.read.ReadPage(ctx, page.CUID)
		if err != nil || strings.Contains(w.HTML, "<div") || len(w.Embeds) != 0 {
			t.Fatalf("after A was unshared: %v, HTML %q, Embeds %v", err, w.HTML, w.Embeds)
		}
	})
}

// TestAMissingPartIsWarned: publishing or updating a note with an embed of a heading or
// block that the embedded note lacks warns unknown_note_link, with the embed as written.
func TestAMissingPartIsWarned(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, 0)
	h.publish(t, "A", "a")
	p, err := h.pub.Publish(ctx, author, note.Draft{Content: "![[A#missing]] ![[A#there]] ![[A#missing]]", Title: new("P")})
	if err != nil {
		t.Fatal(err)
	}
	want := []note.Warning{{Code: note.WarnUnknownNoteLink, Ref: "A#missing",
		Message: "A has no heading or block missing; the embed shows as a link to the note."}}
	if !reflect.DeepEqual(p.Warnings, want) {
		t.Errorf("publish warnings %+v, want %+v", p.Warnings, want)
	}
	if u := h.update(t, p.CUID, note.Patch{Content: new("![[A#missing]]")}); !reflect.DeepEqual(u.Warnings, want) {
		t.Errorf("update warnings %+v, want %+v", u.Warnings, want)
	}
}
