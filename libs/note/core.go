package note

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sharenote/sharenote/libs/cuid"
)

// Image is an uploaded image that passed CheckImage.
type Image struct {
	Filename  string
	MediaType string
	Data      []byte
}

// StoredImage is an image as stored: metadata plus the key of its bytes.
type StoredImage struct {
	AccountCUID     string
	PublicationCUID string
	Filename        string
	MediaType       string
	Size            int64
	SHA256          string
	BlobKey         string
	Data            []byte // Only on the way in; reads fetch the bytes by BlobKey.
	CreatedAt       time.Time
}

// Draft is a publish request after its body format was parsed.
type Draft struct {
	Content string
	Title   *string
	Summary *string
	// Properties from the request; they are merged over the frontmatter's, key by key.
	Properties     map[string]any
	ShowProperties bool
	ExpiresAt      *time.Time
	Images         []Image
}

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
}

// Empty reports whether the patch changes nothing.
func (p Patch) Empty() bool {
	return p.Content == nil && !p.Title.Set && !p.Summary.Set && !p.Properties.Set && p.ShowProperties == nil && !p.ExpiresAt.Set
}

// VersionMeta describes one snapshot in the versions list.
type VersionMeta struct {
	Number       int64
	CreatedAt    time.Time
	Title        *string
	ContentBytes int
}

// Version is one snapshot: the publication as it was before an update.
type Version struct {
	Number         int64
	CreatedAt      time.Time
	Title          *string
	Summary        *string
	Content        string
	Properties     map[string]any
	ShowProperties bool
	ExpiresAt      *time.Time
}

// Storer is what the use cases need from storage; notedb implements it.
type Storer interface {
	// Create stores p with its images, charging their bytes to the account in the same
	// transaction; ErrQuotaExceeded when that would pass quota.
	Create(ctx context.Context, p Publication, images []StoredImage, quota int64) error
	// Find returns the publication in any state; ErrNotFound when there is none.
	Find(ctx context.Context, cuid string) (Publication, error)
	// Update locks the owner's published (active or expired) publication, stores a
	// snapshot of it, calls apply with it and the names of its images, and saves the
	// result, all in one transaction. Only the MaxVersions newest snapshots are kept.
	Update(ctx context.Context, cuid, accountCUID string, now time.Time, apply func(p *Publication, images []string) error) (Publication, error)
	// Versions lists the snapshots of the owner's published publication, newest first.
	Versions(ctx context.Context, cuid, accountCUID string) ([]VersionMeta, error)
	// Version returns one snapshot; ErrNotFound for an unknown or pruned number.
	Version(ctx context.Context, cuid, accountCUID string, number int64) (Version, error)
	// Unpublish ends public access and releases the images' bytes from the quota at once.
	Unpublish(ctx context.Context, cuid, accountCUID string, now time.Time) error
	// List returns up to limit of the owner's published publications after the cursor,
	// newest first, ties broken by cuid.
	List(ctx context.Context, accountCUID string, after *Cursor, limit int) ([]Publication, error)
	// FindImage returns an image's metadata; ErrNotFound when there is none.
	FindImage(ctx context.Context, userCUID, noteCUID, filename string) (StoredImage, error)
	// ImageData returns the bytes stored under key.
	ImageData(ctx context.Context, key string) ([]byte, error)
	// CursorKey returns the installation's cursor MAC key, making it on first use.
	CursorKey(ctx context.Context) ([]byte, error)
}

// Core implements the publication use cases.
type Core struct {
	store     Storer
	now       func() time.Time
	publicURL string
	quota     int64

	keyMu     sync.Mutex
	cursorKey []byte
}

// NewCore returns the use cases on store; publicURL is {base_url} and quota the image
// storage per account in bytes.
func NewCore(store Storer, now func() time.Time, publicURL string, quota int64) *Core {
	return &Core{store: store, now: now, publicURL: publicURL, quota: quota}
}

// Now returns the core's clock reading, truncated to the milliseconds timestamps carry.
func (c *Core) Now() time.Time { return c.now().UTC().Truncate(time.Millisecond) }

// PublicURL returns {base_url}.
func (c *Core) PublicURL() string { return c.publicURL }

// URL returns the public URL of a publication.
func (c *Core) URL(cuid string) string { return c.publicURL + "/s/" + cuid }

// ImageURL returns the public URL of an image.
func (c *Core) ImageURL(userCUID, noteCUID, filename string) string {
	return c.publicURL + "/api/images/" + userCUID + "/" + noteCUID + "/" + url.PathEscape(filename)
}

// Publish creates a publication from a draft: frontmatter becomes properties (request
// properties win per key), a frontmatter title is the title when none was given, image
// wikilinks become image URLs, and the images are stored and charged to the account.
func (c *Core) Publish(ctx context.Context, accountCUID string, d Draft) (Publication, error) {
	now := c.Now()
	p := Publication{CUID: cuid.New(), AccountCUID: accountCUID, Title: d.Title, Summary: d.Summary,
		ShowProperties: d.ShowProperties, ExpiresAt: d.ExpiresAt, CreatedAt: now, UpdatedAt: now}
	names := make([]string, len(d.Images))
	for i, img := range d.Images {
		names[i] = img.Filename
	}
	if err := c.setContent(&p, d.Content, d.Properties, d.Title != nil, names); err != nil {
		return Publication{}, err
	}
	if err := checkSize(&p); err != nil {
		return Publication{}, err
	}
	images := make([]StoredImage, len(d.Images))
	for i, img := range d.Images {
		sum := sha256.Sum256(img.Data)
		images[i] = StoredImage{AccountCUID: accountCUID, PublicationCUID: p.CUID, Filename: img.Filename,
			MediaType: img.MediaType, Size: int64(len(img.Data)), SHA256: hex.EncodeToString(sum[:]),
			BlobKey: "images/" + p.CUID + "/" + cuid.New(), Data: img.Data, CreatedAt: now}
	}
	if err := c.store.Create(ctx, p, images, c.quota); err != nil {
		return Publication{}, fmt.Errorf("publish: %w", err)
	}
	return p, nil
}

// setContent parses content's frontmatter into p: the body without it, the properties
// (request properties merged over the frontmatter's) and, unless the request had a title,
// a frontmatter title. Wikilinks to images named in images become their URLs. Without
// frontmatter or request properties, p keeps its properties.
func (c *Core) setContent(p *Publication, content string, props map[string]any, hasTitle bool, images []string) error {
	fm, body, err := SplitFrontmatter(content)
	if err != nil {
		return err
	}
	if fm != nil || props != nil {
		merged := make(map[string]any, len(fm)+len(props))
		maps.Copy(merged, fm)
		maps.Copy(merged, props)
		p.Properties = merged
	}
	if t, ok := fm["title"].(string); ok && !hasTitle {
		p.Title = &t
	}
	if len(images) > 0 {
		urls := make(map[string]string, len(images))
		for _, name := range images {
			urls[name] = c.ImageURL(p.AccountCUID, p.CUID, name)
		}
		body = ReplaceImageLinks(body, urls)
	}
	p.Content = body
	return nil
}

// checkSize enforces MaxNoteBytes on the stored note data, and refuses text no text
// column of Postgres can hold (invalid UTF-8, NUL), so that SQLite, which would store it,
// behaves the same.
func checkSize(p *Publication) error {
	n := 0
	for name, s := range map[string]*string{"content": &p.Content, "title": p.Title, "summary": p.Summary} {
		if s == nil {
			continue
		}
		n += len(*s)
		if !utf8.ValidString(*s) || strings.ContainsRune(*s, 0) {
			return fmt.Errorf("%w: %s contains a NUL character or invalid UTF-8", ErrInvalidText, name)
		}
	}
	if p.Properties != nil {
		b, err := json.Marshal(p.Properties)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidProperties, err)
		}
		n += len(b)
	}
	if n > MaxNoteBytes {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrNoteTooLarge, n, MaxNoteBytes)
	}
	return nil
}

// Read returns a publication for the public: ErrNotFound unless it is active.
func (c *Core) Read(ctx context.Context, cuid string) (Publication, error) {
	p, err := c.store.Find(ctx, cuid)
	if err != nil {
		return Publication{}, err
	}
	if p.Status(c.now()) != Active {
		return Publication{}, ErrNotFound
	}
	return p, nil
}

// Update applies a patch to the owner's publication after snapshotting it. New content
// is parsed as at publish; setting a future expiry or clearing it makes an expired
// publication active again.
func (c *Core) Update(ctx context.Context, accountCUID, cuid string, patch Patch) (Publication, error) {
	now := c.Now()
	p, err := c.store.Update(ctx, cuid, accountCUID, now, func(p *Publication, images []string) error {
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
		}
		if patch.ShowProperties != nil {
			p.ShowProperties = *patch.ShowProperties
		}
		if patch.ExpiresAt.Set {
			p.ExpiresAt = patch.ExpiresAt.Value
		}
		p.UpdatedAt = now
		return checkSize(p)
	})
	if err != nil {
		return Publication{}, fmt.Errorf("update: %w", err)
	}
	return p, nil
}

// Versions lists the owner's snapshots of a publication, newest first.
func (c *Core) Versions(ctx context.Context, accountCUID, cuid string) ([]VersionMeta, error) {
	return c.store.Versions(ctx, cuid, accountCUID)
}

// Version returns one snapshot.
func (c *Core) Version(ctx context.Context, accountCUID, cuid string, number int64) (Version, error) {
	return c.store.Version(ctx, cuid, accountCUID, number)
}

// Unpublish ends public access to the owner's publication and releases its image bytes.
func (c *Core) Unpublish(ctx context.Context, accountCUID, cuid string) error {
	return c.store.Unpublish(ctx, cuid, accountCUID, c.Now())
}

// List returns a page of the owner's publications and the cursor of the next page ("" on
// the last page). cursor is "" for the first page.
func (c *Core) List(ctx context.Context, accountCUID, cursor string, limit int) ([]Publication, string, error) {
	key, err := c.key(ctx)
	if err != nil {
		return nil, "", err
	}
	var after *Cursor
	if cursor != "" {
		cur, err := DecodeCursor(key, accountCUID, cursor)
		if err != nil {
			return nil, "", err
		}
		after = &cur
	}
	rows, err := c.store.List(ctx, accountCUID, after, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list: %w", err)
	}
	if len(rows) <= limit {
		return rows, "", nil
	}
	rows = rows[:limit]
	last := rows[limit-1]
	return rows, EncodeCursor(key, accountCUID, Cursor{CreatedMS: last.CreatedAt.UnixMilli(), CUID: last.CUID}), nil
}

// key returns the cursor MAC key, loading it once.
func (c *Core) key(ctx context.Context) ([]byte, error) {
	c.keyMu.Lock()
	defer c.keyMu.Unlock()
	if c.cursorKey == nil {
		k, err := c.store.CursorKey(ctx)
		if err != nil {
			return nil, fmt.Errorf("cursor key: %w", err)
		}
		c.cursorKey = k
	}
	return c.cursorKey, nil
}

// ReadImage returns a public image with its bytes and its publication: ErrNotFound
// unless the publication is active.
func (c *Core) ReadImage(ctx context.Context, userCUID, noteCUID, filename string) (StoredImage, Publication, error) {
	img, err := c.store.FindImage(ctx, userCUID, noteCUID, filename)
	if err != nil {
		return StoredImage{}, Publication{}, err
	}
	p, err := c.Read(ctx, noteCUID)
	if err != nil {
		return StoredImage{}, Publication{}, err
	}
	if img.Data, err = c.store.ImageData(ctx, img.BlobKey); err != nil {
		return StoredImage{}, Publication{}, fmt.Errorf("image data: %w", err)
	}
	return img, p, nil
}
