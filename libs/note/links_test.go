package note_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/cases"

	"github.com/sharenote/sharenote/libs/note"
)

// TestFollowersAreInvalidatedNotRendered: a change that may change what the author's note
// links lead to tells every process once (one account-wide event for the account, however many
// notes link), and renders no other note, then or in the background: links are resolved
// when a page is built.
func TestFollowersAreInvalidatedNotRendered(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// change changes target (a note titled "Target") and returns the Markdown it was
		// expected to render ("" for none).
		change func(t *testing.T, h *harness, target note.Publication) string
		links  int
	}{
		{"publishing a titled note", func(t *testing.T, h *harness, _ note.Publication) string {
			h.publish(t, "Target", "a second target")
			return "a second target"
		}, 1},
		{"retitling a note", func(t *testing.T, h *harness, target note.Publication) string {
			h.update(t, target.CUID, note.Patch{Title: note.Optional[string]{Set: true, Value: new("Renamed")}})
			return ""
		}, 1},
		{"untitling a note", func(t *testing.T, h *harness, target note.Publication) string {
			h.update(t, target.CUID, note.Patch{Title: note.Optional[string]{Set: true}})
			return ""
		}, 1},
		{"unsharing a titled note", func(t *testing.T, h *harness, target note.Publication) string {
			if err := h.pub.Unpublish(ctx, author, target.CUID); err != nil {
				t.Fatal(err)
			}
			return ""
		}, 1},
		{"setting a titled note's expiry", func(t *testing.T, h *harness, target note.Publication) string {
			h.update(t, target.CUID, note.Patch{ExpiresAt: note.Optional[time.Time]{Set: true, Value: new(start.Add(time.Hour))}})
			return ""
		}, 1},
		{"clearing an expiry a titled note does not have", func(t *testing.T, h *harness, target note.Publication) string {
			h.update(t, target.CUID, note.Patch{ExpiresAt: note.Optional[time.Time]{Set: true}})
			return ""
		}, 0},
		{"a new content of a titled note", func(t *testing.T, h *harness, target note.Publication) string {
			h.update(t, target.CUID, note.Patch{Content: new("new words")})
			return "new words"
		}, 0},
		{"the same title again", func(t *testing.T, h *harness, target note.Publication) string {
			h.update(t, target.CUID, note.Patch{Title: note.Optional[string]{Set: true, Value: new("Target")}})
			return ""
		}, 0},
		{"publishing an untitled note", func(t *testing.T, h *harness, _ note.Publication) string {
			h.publish(t, "", "no title")
			return "no title"
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 0)
			target := h.publish(t, "Target", "the target")
			for _, s := range []string{"one", "two", "three"} {
				h.publish(t, "Follower "+s, "see [[Target]] "+s)
			}
			h.settle()

			want := tc.change(t, h, target)
			if err := h.renders.RenderPending(ctx); err != nil {
				t.Fatal(err)
			}
			if got := h.notifier.linksCalls(); len(got) != tc.links || tc.links == 1 && got[0] != "links "+author {
				t.Errorf("account-wide changes told = %q, want %d for the author", got, tc.links)
			}
			rendered := h.renderer.rendered()
			if want == "" && len(rendered) != 0 || want != "" && !slices.Equal(rendered, []string{want}) {
				t.Errorf("rendered %q, want only the changed note's %q", rendered, want)
			}
			if slices.ContainsFunc(rendered, func(md string) bool { return strings.Contains(md, "[[Target]]") }) {
				t.Errorf("a follower was rendered again: %q", rendered)
			}
		})
	}
}

// TestExpiryNeedsNoNotification: a note that expires by the clock drops out of its
// followers' links without any change being told: ReadPage resolves among the notes
// active at read time, and LinksExpireAt told the caches when to drop the page.
func TestExpiryNeedsNoNotification(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, 0)
	expires := start.Add(time.Hour)
	if _, err := h.pub.Publish(ctx, author, note.Draft{Content: "x", Title: new("Target"), ExpiresAt: &expires}); err != nil {
		t.Fatal(err)
	}
	f := h.publish(t, "Follower", "see [[Target]]")
	v, err := h.read.ReadPage(ctx, f.CUID)
	if err != nil || v.LinksExpireAt == nil || !v.LinksExpireAt.Equal(expires) || !strings.Contains(v.HTML, "<a href=") {
		t.Fatalf("before expiry: %v, LinksExpireAt %v, HTML %q", err, v.LinksExpireAt, v.HTML)
	}
	h.clock.Advance(time.Hour)
	v, err = h.read.ReadPage(ctx, f.CUID)
	if err != nil || v.LinksExpireAt != nil || strings.Contains(v.HTML, "<a href=") {
		t.Fatalf("after expiry: %v, LinksExpireAt %v, HTML %q", err, v.LinksExpireAt, v.HTML)
	}
}

func TestReadPageResolvesLinks(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, 0)
	inTwo, inOne := start.Add(2*time.Hour), start.Add(time.Hour)
	a, err := h.pub.Publish(ctx, author, note.Draft{Content: "a", Title: new("A"), ExpiresAt: &inTwo})
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.pub.Publish(ctx, author, note.Draft{Content: "b", Title: new("B"), ExpiresAt: &inOne})
	if err != nil {
		t.Fatal(err)
	}
	h.publish(t, "C", "c never expires")
	if _, err := h.pub.Publish(ctx, "accountother000000000000", note.Draft{Content: "not the author's", Title: new("Elsewhere")}); err != nil {
		t.Fatal(err)
	}
	// A note titled like an image: a link of that name is a reference to an image.
	h.publish(t, "photo.png", "a note named like an image")
	page := h.publish(t, "Page", "[[A]] [[B#part]] [[C]] [[photo.png]] [[Missing]] [[Elsewhere]]")

	t.Run("a link to an active note of the author leads to its page; others are text", func(t *testing.T) {
		v, err := h.read.ReadPage(ctx, page.CUID)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			`<a href="` + publicURL + `/s/` + a.CUID + `">A</a>`, `<a href="` + publicURL + `/s/` + b.CUID + `#part">B</a>`,
			`">C</a>`, ` photo.png `, ` Missing `, ` Elsewhere<`,
		} {
			if !strings.Contains(v.HTML, want) {
				t.Errorf("HTML %q lacks %q", v.HTML, want)
			}
		}
		if strings.Contains(v.HTML, `">photo.png</a>`) {
			t.Errorf("an image's name resolved to a note: %q", v.HTML)
		}
	})
	t.Run("LinksExpireAt is the earliest expiry among the notes linked", func(t *testing.T) {
		v, err := h.read.ReadPage(ctx, page.CUID)
		if err != nil || v.LinksExpireAt == nil || !v.LinksExpireAt.Equal(inOne) {
			t.Fatalf("LinksExpireAt = %v (%v), want %v", v.LinksExpireAt, err, inOne)
		}
	})
	t.Run("ReadView leaves the placeholders and sets neither", func(t *testing.T) {
		v, err := h.read.ReadView(ctx, page.CUID)
		if err != nil || v.LinksTag != "" || v.LinksExpireAt != nil || !strings.Contains(v.HTML, "{{") {
			t.Fatalf("ReadView = %+v, %v", v, err)
		}
	})
	t.Run("LinksTag changes with the targets and only with them", func(t *testing.T) {
		tag := func() string {
			t.Helper()
			v, err := h.read.ReadPage(ctx, page.CUID)
			if err != nil || v.LinksTag == "" {
				t.Fatalf("ReadPage: %v, LinksTag %q", err, v.LinksTag)
			}
			return v.LinksTag
		}
		first := tag()
		if again := tag(); again != first {
			t.Fatalf("LinksTag changed between two reads: %q, %q", first, again)
		}
		h.update(t, a.CUID, note.Patch{Content: new("a, longer")})
		if got := tag(); got != first {
			t.Fatalf("LinksTag changed with a target's content: %q, %q", first, got)
		}
		missing := h.publish(t, "Missing", "now there is one")
		second := tag()
		if second == first {
			t.Fatalf("LinksTag %q did not change when a link found its note", first)
		}
		if err := h.pub.Unpublish(ctx, author, missing.CUID); err != nil {
			t.Fatal(err)
		}
		if got := tag(); got != first {
			t.Fatalf("LinksTag = %q after the new target was unshared, want %q again", got, first)
		}
		h.clock.Advance(time.Hour)
		if got := tag(); got == first {
			t.Fatalf("LinksTag %q did not change when a target expired", got)
		}
	})
	t.Run("a note that is not active is not found", func(t *testing.T) {
		if _, err := h.read.ReadPage(ctx, b.CUID); !errors.Is(err, note.ErrNotFound) {
			t.Fatalf("ReadPage of an expired note = %v, want ErrNotFound", err)
		}
	})
}

// Names compare by NFC and Unicode case folding; ASCII takes a shortcut that must agree.
func TestMatchKeyFoldsAndNormalises(t *testing.T) {
	var ascii strings.Builder
	for c := range 128 {
		ascii.WriteByte(byte(c))
	}
	for _, tt := range []struct{ in, want string }{
		{ascii.String(), cases.Fold().String(ascii.String())},
		{"Folder/My NOTE.md", "folder/my note.md"},
		{"Cafe\u0301 ÜBER", "café über"}, // NFD "é" composed, then folded
		{"Straße", "strasse"},
		{"ΣΊΣΥΦΟΣ", "σίσυφοσ"},
	} {
		if got := note.MatchKey(tt.in); got != tt.want {
			t.Errorf("MatchKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A publish inserts its note while its links are looked up: a link to the note's own name
// is unknown at its publish whichever ends first, as it was when the lookup came first.
func TestALinkToItselfIsUnknownAtPublish(t *testing.T) {
	for range 20 {
		h := newHarness(t, 0)
		p := h.publish(t, "Me", "A link to [[Me]] and to [[Nobody]].")
		var refs []string
		for _, w := range p.Warnings {
			if w.Code == note.WarnUnknownNoteLink {
				refs = append(refs, w.Ref)
			}
		}
		if !slices.Equal(refs, []string{"Me", "Nobody"}) {
			t.Fatalf("unknown_note_link warnings for %v, want Me and Nobody", refs)
		}
	}
}
