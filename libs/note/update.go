package note

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Optional is a PATCH field: absent (Set false), null (Set, Value nil) or a value.
type Optional[T any] struct {
	Set   bool
	Value *T
}

// Patch is a PATCH request: only the fields present change.
type Patch struct {
	Content        *string
	Title          Optional[string]
	Summary        Optional[string]
	Properties     Optional[map[string]any]
	ShowProperties *bool
	ExpiresAt      Optional[time.Time]
	Path           Optional[string]
	// IfMatch, when not empty, lists the etags of which the publication must still have
	// one ("*": any); otherwise the update fails with ErrStale and changes nothing.
	IfMatch []string
	// Upload holds images to add or replace (a multipart PATCH), already stored, made by
	// NewUploadTo for this publication; nil when there are none.
	Upload *Upload
}

// Empty reports whether the patch changes nothing.
func (p Patch) Empty() bool {
	return p.Content == nil && !p.Title.Set && !p.Summary.Set && !p.Properties.Set && p.ShowProperties == nil && !p.ExpiresAt.Set && !p.Path.Set &&
		(p.Upload == nil || len(p.Upload.images) == 0)
}

// Current is a publication as an update reads it.
type Current struct {
	Publication
	// Images are the names of its images, then those of the update's new images it has
	// not.
	Images []string
	// Version is the number under which an update keeps its text (the next version).
	Version int64
	// NamesVersion is the NamesVersion whose rules wrote its rows of the link index.
	NamesVersion int
}

// Edit is one update of a publication as the domain decided it, which the store commits
// whole (PublishStore.Commit).
type Edit struct {
	Owned
	// From is the etag of the publication the edit was decided on.
	From string
	// To is the publication after the edit; Rendered says whether it carries a new
	// render, else the stored render is kept (a background render may have replaced it).
	To       Publication
	Rendered bool
	// Kept is the text the edit replaces, kept as a version; the versions numbered Prune
	// or lower are deleted (MaxVersions are kept).
	Kept  Version
	Prune int64
	// Names says To's rows of the link index are written again.
	Names bool
	// Images are new images whose bytes are reserved under Reservation, settled in the
	// commit; each replaces the image of its name, whose bytes leave the account's usage.
	Images      []StoredImage
	Reservation string
	// Change is what the edit changes, for the edge's outbox in the same commit.
	Change Change
}

// How often an update is decided again when its note changed before it was stored: a
// patch of new content renders again once, one without new content costs no render.
const (
	contentTries = 2
	patchTries   = 5
)

// Update applies a patch to the owner's publication after snapshotting it. New content
// is parsed as at publish; setting a future expiry or clearing it makes an expired
// publication active again.
//
// The patch is decided (and new content rendered) on the publication as read, holding no
// lock: never under the row's lock or the embedded default's one connection (a render
// may take seconds). The store commits the edit only if the publication's etag is still
// the one read. Updates of one note take turns in this process, those of its content and
// the others each in their own line (edits), so it changes meanwhile only by an update of
// the other line or another process's. Then the patch is read and decided again: a patch
// with If-Match then fails with ErrStale (the etag it named is gone); new content is
// rendered once more and fails with ErrBusy if the publication changed again.
func (c *Publisher) Update(ctx context.Context, accountCUID, cuid string, patch Patch) (Publication, error) {
	now := c.stamp()
	added, reservation, err := patch.check(cuid)
	if err != nil {
		return Publication{}, err
	}
	tries := patchTries
	if patch.Content != nil {
		tries = contentTries
	}
	defer c.edits.lock(cuid, patch.Content != nil)()
	owned := Owned{Account: accountCUID, CUID: cuid}
	var e Edit
	var targets []NameHit // of the new content's links
	for attempt := 1; ; attempt++ {
		cur, err := c.store.Editable(ctx, owned, added)
		if err != nil {
			return Publication{}, fmt.Errorf("update: %w", err)
		}
		if !patch.matches(cur.ETag) {
			return Publication{}, fmt.Errorf("update: %w", ErrStale)
		}
		next := cur.Publication
		if targets, err = c.applyPatch(ctx, &next, patch, now, cur.Images); err != nil {
			return Publication{}, fmt.Errorf("update: %w", err)
		}
		e = Edit{Owned: owned, From: cur.ETag, To: next, Rendered: patch.Content != nil,
			Kept:   Version{Number: cur.Version, CreatedAt: now, Text: cur.Text},
			Prune:  cur.Version - MaxVersions,
			Names:  !equalPaths(cur.Path, next.Path) || namesStale(cur, next),
			Images: added, Reservation: reservation, Change: c.updateChange(cur.Publication, next)}
		err = c.store.Commit(ctx, e)
		if errors.Is(err, ErrStale) && attempt < tries {
			continue // Read again: If-Match, if any, is checked on what changed.
		}
		if errors.Is(err, ErrStale) && len(patch.IfMatch) == 0 {
			err = ErrBusy
		}
		if err != nil {
			return Publication{}, fmt.Errorf("update: %w", err)
		}
		break
	}
	p := e.To
	if patch.Upload != nil {
		patch.Upload.done = true
	}
	if patch.Content != nil {
		if err := c.warnMissingParts(ctx, &p, targets); err != nil {
			// The update is stored: only a warning is missing.
			c.log.WarnContext(ctx, "update: the embeds' headings and blocks could not be checked", "cuid", cuid, "err", err)
		}
	}
	c.tell(ctx, e.Change)
	return p, nil
}

// namesStale reports whether an update from cur to p writes p's rows of the link index
// again: rows written by older rules, other names, or an expiry they carry changed. (A
// changed path is checked by the caller.)
func namesStale(cur Current, p Publication) bool {
	return cur.NamesVersion != NamesVersion || !slices.Equal(cur.Names(), p.Names()) || !equalTimes(cur.ExpiresAt, p.ExpiresAt)
}

func equalPaths(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// check checks what can be checked of a patch of publication cuid before it is applied,
// and returns the images it adds with their reservation.
func (p Patch) check(cuid string) (added []StoredImage, reservation string, err error) {
	if p.Path.Value != nil {
		if err := CheckPath(*p.Path.Value); err != nil {
			return nil, "", err
		}
	}
	if p.Upload == nil {
		return nil, "", nil
	}
	if p.Upload.cuid != cuid {
		return nil, "", fmt.Errorf("update: images uploaded to %s, not %s", p.Upload.cuid, cuid)
	}
	return p.Upload.images, p.Upload.id, nil
}

// matches reports whether a publication whose etag is etag meets the patch's If-Match.
func (p Patch) matches(etag string) bool {
	return len(p.IfMatch) == 0 || slices.Contains(p.IfMatch, "*") || slices.Contains(p.IfMatch, etag)
}

// applyPatch changes p as patch says, at now, and returns what new content's links lead
// to (nil without new content): images are the names of the publication's images.
func (c *Publisher) applyPatch(ctx context.Context, p *Publication, patch Patch, now time.Time, images []string) ([]NameHit, error) {
	if patch.Title.Set {
		p.Title = patch.Title.Value
	}
	if patch.Summary.Set {
		p.Summary = patch.Summary.Value
	}
	var props map[string]any
	if patch.Properties.Set {
		p.Properties = nil
		if patch.Properties.Value != nil {
			props = *patch.Properties.Value
			p.Properties = props
		}
	}
	var w *written
	if patch.Content != nil {
		content, err := c.setContent(p, *patch.Content, props, patch.Title.Set, images)
		if err != nil {
			return nil, err
		}
		w = &content
		p.RenderTries, p.RenderMisses = 0, 0
	}
	if patch.ShowProperties != nil {
		p.ShowProperties = *patch.ShowProperties
	}
	if patch.ExpiresAt.Set {
		p.ExpiresAt = patch.ExpiresAt.Value
	}
	if patch.Path.Set {
		p.Path = patch.Path.Value
	}
	p.UpdatedAt = now
	p.ETag = newETag()
	if err := checkSize(p); err != nil {
		return nil, err
	}
	if w != nil {
		look := c.lookUp(ctx, p, c.store.ResolveNames)
		defer look.close()
		if err := c.render(ctx, p, w, look, causeUpdate); err != nil {
			return nil, err
		}
		// The embeds' missing parts are warned of once the update is stored (Update).
		return c.warnUnknownLinks(p, look)
	}
	return nil, nil
}

func equalTimes(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}

// Unpublish ends public access to the owner's publication and releases its image bytes.
func (c *Publisher) Unpublish(ctx context.Context, accountCUID, cuid string) error {
	// Its names, for the notes that link to it.
	v, err := c.store.FindView(ctx, cuid)
	if err != nil {
		return err
	}
	change := unpublishChange(v)
	if err := c.store.Unpublish(ctx, Owned{Account: accountCUID, CUID: cuid}, c.stamp(), change); err != nil {
		return err
	}
	c.tell(ctx, change)
	return nil
}
