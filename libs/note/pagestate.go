package note

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sharenote/sharenote/libs/account"
)

// A built page keeps what it was built from (PageSources), so that a re-check of an
// unchanged page is one read of the same rows (ReadStore.PageState) and not a rebuild
// (View.Unchanged):
// the embedded default re-checks every cached page once a second, and a page that
// embeds large notes costs a rebuild far more than that read.

// PageSources are what ReadPage read to build a page: the keys it looked up in the link
// index (at every level of embeds), the notes whose rows it read whole (the page's
// note and the notes it looked for as embeds), the other notes whose outlines it read,
// and Sum, the digest of their state as the build found it.
type PageSources struct {
	Keys, Notes, Outlined []string
	Sum                   [sha256.Size]byte
}

// PageState is the state of a page's sources as one read finds it: the owner's
// settings, the account's notes among those asked for that are not unpublished, and the
// link index rows of the keys asked for.
type PageState struct {
	Owner account.Settings
	Notes []NoteState
	Names []NameHit
}

// NoteState is what a page shows of a note's row: its validator, its render and
// outline, and its expiry.
type NoteState struct {
	CUID, ETag, RenderID, Outline string
	ExpiresAt                     *time.Time
}

// sum is the digest of s as a page built at now sees it: the notes and names active at
// now, in a fixed order, only the outlines of the notes in outlined (whose outlines
// alone the page read).
func (s PageState) sum(now time.Time, outlined []string) [sha256.Size]byte {
	active := func(t *time.Time) bool { return t == nil || now.Before(*t) }
	h := sha256.New()
	field := func(v string) {
		h.Write(binary.AppendUvarint(nil, uint64(len(v))))
		h.Write([]byte(v))
	}
	when := func(t *time.Time) {
		if t != nil {
			field(t.UTC().Format(time.RFC3339Nano))
		} else {
			field("")
		}
	}
	o := s.Owner
	for _, v := range []string{o.Name, o.Theme, o.AccentColor, o.Font, boolString(o.ShowAuthor), boolString(o.Indexable)} {
		field(v)
	}
	notes := slices.SortedFunc(slices.Values(s.Notes), func(a, b NoteState) int { return strings.Compare(a.CUID, b.CUID) })
	for _, n := range notes {
		if !active(n.ExpiresAt) {
			continue
		}
		if slices.Contains(outlined, n.CUID) {
			n = NoteState{CUID: n.CUID, Outline: n.Outline}
		}
		field(n.CUID)
		field(n.ETag)
		field(n.RenderID)
		field(n.Outline)
		when(n.ExpiresAt)
	}
	field("names")
	names := slices.SortedFunc(slices.Values(s.Names), func(a, b NameHit) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), cmp.Compare(a.Kind, b.Kind), strings.Compare(a.CUID, b.CUID))
	})
	for _, n := range names {
		if !active(n.ExpiresAt) {
			continue
		}
		field(n.Key)
		field(strconv.Itoa(int(n.Kind)))
		field(n.CUID)
		field(n.Path)
		field(n.CreatedAt.UTC().Format(time.RFC3339Nano))
		when(n.ExpiresAt)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

func boolString(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// pageUnchanged reports whether the page of account built from src would come out the
// same now, with one read (ReadStore.PageState).
func (c *Reader) pageUnchanged(ctx context.Context, accountCUID string, src *PageSources) (bool, error) {
	now := c.now()
	st, err := c.store.PageState(ctx, accountCUID, append(slices.Clip(src.Notes), src.Outlined...), src.Keys, now)
	if err != nil {
		return false, err
	}
	return st.sum(now, src.Outlined) == src.Sum, nil
}
