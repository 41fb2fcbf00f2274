package note

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/sharenote/sharenote/libs/blob"
)

// Reader reads the public pages of notes.
type Reader struct {
	*core
	store ReadStore
}

// NewReader returns the Reader over store, resolving note links and embeds with
// renderer; it panics without one.
func NewReader(store ReadStore, renderer Renderer, cfg Config) *Reader {
	return &Reader{core: newCore("the Reader", cfg, renderer, true), store: store}
}

// ReadView returns an active publication with its owner's settings, for the public:
// ErrNotFound unless it is active. It serves the stored render as it is: reads never
// render (RenderPending redoes stale renders in the background).
func (c *Reader) ReadView(ctx context.Context, cuid string) (View, error) {
	v, err := c.activeView(ctx, cuid, c.store.FindView)
	return public(v), err
}

// Cards reads what the preview card of a note draws.
type Cards struct {
	*core
	store CardStore
}

// NewCards returns the Cards over store.
func NewCards(store CardStore, cfg Config) *Cards {
	return &Cards{core: newCore("Cards", cfg, nil, false), store: store}
}

// ReadCard is Reader.ReadView without the note's body (its content, properties and render),
// read with a narrower query: what a preview card draws.
func (c *Cards) ReadCard(ctx context.Context, cuid string) (View, error) {
	v, err := c.activeView(ctx, cuid, c.store.FindCard)
	return public(v), err
}

// activeView is the active publication cuid with its owner's settings, as find reads it.
func (c *core) activeView(ctx context.Context, cuid string, find func(context.Context, string) (View, error)) (View, error) {
	v, err := find(ctx, cuid)
	if err != nil {
		return View{}, err
	}
	if v.Status(c.now()) != Active {
		return View{}, ErrNotFound
	}
	return v, nil
}

// public is v as the public sees it: titled by its path when it has no title, and
// without the path, which no public read shows.
func public(v View) View {
	v.Title, v.Path = v.DisplayTitle(), nil
	return v
}

// Images reads the images of notes, for the public.
type Images struct {
	*core
	store ImageStore
	blobs blob.Store
}

// NewImages returns the Images over store, their bytes in blobs; it panics without an
// object store.
func NewImages(store ImageStore, blobs blob.Store, cfg Config) *Images {
	if blobs == nil {
		panic("note: Images needs an object store")
	}
	return &Images{core: newCore("Images", cfg, nil, false), store: store, blobs: blobs}
}

// ReadImage returns a public image (its metadata, not its bytes: OpenImage opens them)
// and its publication's view: ErrNotFound unless the publication is active.
func (c *Images) ReadImage(ctx context.Context, userCUID, noteCUID, filename string) (ImageView, error) {
	iv, err := c.store.FindImageView(ctx, userCUID, noteCUID, filename)
	if err != nil {
		return ImageView{}, err
	}
	if iv.Note.Status(c.now()) != Active {
		return ImageView{}, ErrNotFound
	}
	return iv, nil
}

// OpenImage opens the bytes of an image ReadImage returned, n of them from offset off
// (n < 0: to the end): from the object store, or from the database where a release
// before the object store left them and `sharenote migrate` has not copied them yet.
func (c *Images) OpenImage(ctx context.Context, img StoredImage, off, n int64) (io.ReadCloser, error) {
	rc, _, err := c.blobs.Get(ctx, img.BlobKey, off, n)
	if !errors.Is(err, blob.ErrNotFound) {
		return rc, err
	}
	data, err := c.store.LegacyImage(ctx, img.BlobKey)
	if err != nil {
		return nil, err
	}
	data = data[min(off, int64(len(data))):]
	if n >= 0 {
		data = data[:min(n, int64(len(data)))]
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}
