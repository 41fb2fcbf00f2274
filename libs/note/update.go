package note

import (
	"context"
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
	// IfMatch, when not empty, lists the etags of which the publication must still have
	// one ("*": any); otherwise the update fails with ErrStale and changes nothing.
	IfMatch []string
	// Upload holds images to add or replace (a multipart PATCH), already stored, made by
	// NewUploadTo for this publication; nil when there are none.
	Upload *Upload
}

// Empty reports whether the patch changes nothing.
func (p Patch) Empty() bool {
	return p.Content == nil && !p.Title.Set && !p.Summary.Set && !p.Properties.Set && p.ShowProperties == nil && !p.ExpiresAt.Set &&
		(p.Upload == nil || len(p.Upload.images) == 0)
}

// Update applies a patch to the owner's publication after snapshotting it. New content
// is parsed as at publish; setting a future expiry or clearing it makes an expired
// publication active again.
func (c *Core) Update(ctx context.Context, accountCUID, cuid string, patch Patch) (Publication, error) {
	now := c.Now()
	var added []StoredImage
	reservation := ""
	if patch.Upload != nil {
		if patch.Upload.cuid != cuid {
			return Publication{}, fmt.Errorf("update: images uploaded to %s, not %s", patch.Upload.cuid, cuid)
		}
		added, reservation = patch.Upload.images, patch.Upload.id
	}
	var oldTitle *string
	p, err := c.store.Update(ctx, cuid, accountCUID, now, added, reservation, func(p *Publication, images []string, resolve ResolveTitles) error {
		if len(patch.IfMatch) > 0 && !slices.Contains(patch.IfMatch, "*") && !slices.Contains(patch.IfMatch, p.ETag) {
			return ErrStale
		}
		oldTitle = p.Title
		return c.applyPatch(ctx, p, patch, now, images, resolve)
	})
	if err != nil {
		return Publication{}, fmt.Errorf("update: %w", err)
	}
	if patch.Upload != nil {
		patch.Upload.done = true
	}
	c.notify(ctx, cuid)
	// A new title, or an expiry that may make the note active or not, changes what links
	// to either title lead to.
	if patch.Title.Set && !equalTitles(oldTitle, p.Title) || patch.ExpiresAt.Set && (oldTitle != nil || p.Title != nil) {
		c.notifyLinks(ctx, accountCUID)
	}
	return p, nil
}

// applyPatch changes p as patch says, at now, within the store's update: images are the
// names of the publication's images and resolve finds the notes new content links to.
func (c *Core) applyPatch(ctx context.Context, p *Publication, patch Patch, now time.Time, images []string, resolve ResolveTitles) error {
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
	if patch.Content != nil {
		if err := c.setContent(p, *patch.Content, props, patch.Title.Set, images); err != nil {
			return err
		}
		p.RenderTries, p.RenderMisses = 0, 0
	}
	if patch.ShowProperties != nil {
		p.ShowProperties = *patch.ShowProperties
	}
	if patch.ExpiresAt.Set {
		p.ExpiresAt = patch.ExpiresAt.Value
	}
	p.UpdatedAt = now
	p.ETag = newETag()
	if err := checkSize(p); err != nil {
		return err
	}
	if patch.Content != nil {
		return c.render(ctx, p, resolve, causeUpdate)
	}
	return nil
}

func equalTitles(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// Unpublish ends public access to the owner's publication and releases its image bytes.
func (c *Core) Unpublish(ctx context.Context, accountCUID, cuid string) error {
	// Its title, for the notes that link to it.
	v, err := c.store.FindView(ctx, cuid)
	if err != nil {
		return err
	}
	if err := c.store.Unpublish(ctx, cuid, accountCUID, c.Now()); err != nil {
		return err
	}
	c.notify(ctx, cuid)
	if v.Title != nil {
		c.notifyLinks(ctx, accountCUID)
	}
	return nil
}
