package note_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
)

func TestListPagesNewestFirst(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, 0)
	var want []string
	for range 5 {
		want = append(want, h.publish(t, "", "n").CUID)
		h.clock.Advance(time.Second)
	}
	slices.Reverse(want)
	if _, err := h.pub.Publish(ctx, "accountother000000000000", note.Draft{Content: "not the author's"}); err != nil {
		t.Fatal(err)
	}

	var got []string
	cursor, pages := "", 0
	for {
		rows, next, err := h.history.List(ctx, author, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, p := range rows {
			got = append(got, p.CUID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("listed %q in %d pages, want %q in 3", got, pages, want)
	}
	t.Run("a cursor is bound to its account", func(t *testing.T) {
		_, next, err := h.history.List(ctx, author, "", 2)
		if err != nil || next == "" {
			t.Fatalf("first page: %v, next %q", err, next)
		}
		if _, _, err := h.history.List(ctx, "accountother000000000000", next, 2); !errors.Is(err, note.ErrInvalidCursor) {
			t.Fatalf("another account's cursor = %v, want ErrInvalidCursor", err)
		}
	})
	t.Run("an unshared note leaves the list", func(t *testing.T) {
		if err := h.pub.Unpublish(ctx, author, want[0]); err != nil {
			t.Fatal(err)
		}
		rows, _, err := h.history.List(ctx, author, "", 10)
		if err != nil || len(rows) != 4 || rows[0].CUID != want[1] {
			t.Fatalf("list after unsharing = %d rows, %v", len(rows), err)
		}
	})
}
