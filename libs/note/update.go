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

// Update applies a patch to the owner's publication after snapshotting it. New content
// is parsed as at publish; setting a future expiry or clearing it makes an expired
// publication active again.
//
// New content is rendered before the store's transaction, from the publication as read
// then, never under the row's lock or the embedded default's one connection (a render
// may take seconds); the transaction stores the result only if the publication's etag is
// still the one read. Updates of one note's content take turns in this process (edits),
// so it changes meanwhile only by an update without new content or another process's.
// Then a patch with If-Match fails with ErrStale (the etag it named is gone); one without
// is decided and rendered once more, and fails with ErrBusy if the publication changed
// again.
func (c *Publisher) Update(ctx context.Context, accountCUID, cuid string, patch Patch) (Publication, error) {
	now := c.stamp()
	var added []StoredImage
	reservation := ""
	if patch.Upload != nil {
		if patch.Upload.cuid != cuid {
			return Publication{}, fmt.Errorf("update: images uploaded to %s, not %s", patch.Upload.cuid, cuid)
		}
		added, reservation = patch.Upload.images, patch.Upload.id
	}
	if patch.Path.Value != nil {
		if err := CheckPath(*patch.Path.Value); err != nil {
			return Publication{}, err
		}
	}
	if patch.Content != nil {
		defer c.edits.lock(cuid)()
	}
	var p Publication
	var change Change
	var targets []NameHit // of the new content's links
	for attempt := 1; ; attempt++ {
		var rendered *Publication // the patched publication with its new render
		var read string           // the etag of the publication it was made from
		if patch.Content != nil {
			base, images, err := c.store.Editable(ctx, cuid, accountCUID, added)
			if err != nil {
				return Publication{}, fmt.Errorf("update: %w", err)
			}
			if !patch.matches(base.ETag) {
				return Publication{}, fmt.Errorf("update: %w", ErrStale)
			}
			read = base.ETag
			if targets, err = c.applyPatch(ctx, &base, patch, now, images, c.store.ResolveNames); err != nil {
				return Publication{}, fmt.Errorf("update: %w", err)
			}
			rendered = &base
		}
		var err error
		p, err = c.store.Update(ctx, cuid, accountCUID, now, added, reservation, func(cur *Publication, images []string) (Change, error) {
			if !patch.matches(cur.ETag) {
				return Change{}, ErrStale
			}
			old := *cur
			switch {
			case rendered == nil: // No render: decided here, on the locked row.
				if _, err := c.applyPatch(ctx, cur, patch, now, images, nil); err != nil {
					return Change{}, err
				}
			case cur.ETag != read:
				return Change{}, errChanged
			default:
				*cur = *rendered
			}
			change = c.updateChange(old, *cur)
			return change, nil
		})
		if errors.Is(err, errChanged) && attempt == 1 {
			continue
		}
		if errors.Is(err, errChanged) {
			err = ErrBusy
		}
		if err != nil {
			return Publication{}, fmt.Errorf("update: %w", err)
		}
		break
	}
	if patch.Upload != nil {
		patch.Upload.done = true
	}
	if patch.Content != nil {
		if err := c.warnMissingParts(ctx, &p, targets); err != nil {
			// The update is stored: only a warning is missing.
			c.log.WarnContext(ctx, "update: the embeds' headings and blocks could not be checked", "cuid", cuid, "err", err)
		}
	}
	c.tell(ctx, change)
	return p, nil
}

// errChanged is an update's finding that the publication changed between the read its
// render was made from and the transaction that would store it.
var errChanged = errors.New("the publication changed while the update was rendered")

// matches reports whether a publication whose etag is etag meets the patch's If-Match.
func (p Patch) matches(etag string) bool {
	return len(p.IfMatch) == 0 || slices.Contains(p.IfMatch, "*") || slices.Contains(p.IfMatch, etag)
}

// applyPatch changes p as patch says, at now, and returns what new content's links lead
// to (nil without new content): images are the names of the publication's images and
// resolve finds the notes new content links to (nil is enough without new content).
func (c *Publisher) applyPatch(ctx context.Context, p *Publication, patch Patch, now time.Time, images []string, resolve ResolveNames) ([]NameHit, error) {
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
		look := c.lookUp(ctx, p, resolve)
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
	if err := c.store.Unpublish(ctx, cuid, accountCUID, c.stamp(), change); err != nil {
		return err
	}
	c.tell(ctx, change)
	return nil
}
