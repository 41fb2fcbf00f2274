package note

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/routes"
)

// The image limits. Each image row costs a database row, a blob and work at every
// unpublish; these bound what one request and one account can make the service keep. A
// note worth reading rarely embeds more than a few dozen images.
const (
	// MaxImagesPerPublish bounds the images of one publish request; the parser stops
	// reading the body at the first image over it.
	MaxImagesPerPublish = 100
	// MaxImagesPerAccount bounds an account's images that count toward its storage (those
	// of active and expired publications; unpublishing releases them). It holds under
	// concurrent publishes as the byte quota does.
	MaxImagesPerAccount = 10_000
)

// ErrTooManyImages is a publish over one of the image limits; the error that wraps it is
// a *TooManyImagesError naming the limit.
var ErrTooManyImages = errors.New("too many images")

// TooManyImagesError says which image limit a publish would pass.
type TooManyImagesError struct {
	// Limit is the number of images allowed.
	Limit int
	// PerAccount is true for the account's limit, false for the limit per publish.
	PerAccount bool
}

func (e *TooManyImagesError) Error() string {
	if e.PerAccount {
		return fmt.Sprintf("too many images: an account keeps at most %d images of published notes", e.Limit)
	}
	return fmt.Sprintf("too many images: a publish carries at most %d images", e.Limit)
}

// Unwrap makes errors.Is(err, ErrTooManyImages) hold.
func (e *TooManyImagesError) Unwrap() error { return ErrTooManyImages }

// StoredImage is an image as stored: metadata plus the key of its bytes in the object
// store.
type StoredImage struct {
	AccountCUID     string
	PublicationCUID string
	Filename        string
	MediaType       string
	Size            int64
	SHA256          string
	BlobKey         string
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
	// Upload holds the request's images, already stored; nil when it has none.
	Upload *Upload
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

// VersionMeta describes one snapshot in the versions list.
type VersionMeta struct {
	Number       int64
	CreatedAt    time.Time
	Title        *string
	ContentBytes int
}

// Version is one snapshot: the publication as it was before an update.
type Version struct {
	Number    int64
	CreatedAt time.Time
	Text
}

// ResolveTitles is Storer.ResolveTitles, or the same read within Storer.Update's
// transaction: the update's warnings must not wait for another connection (SQLite has
// one).
type ResolveTitles func(ctx context.Context, accountCUID string, titles []string, now time.Time) (map[string]LinkTarget, error)

// Storer is what the use cases need from storage; notedb implements it.
type Storer interface {
	// Create stores p with its images, whose bytes are in the object store and reserved
	// against the account under reservation, which it settles in the same transaction:
	// ErrUploadExpired when the reservation is gone (the reaper released it).
	Create(ctx context.Context, p Publication, images []StoredImage, reservation string) error
	// Reserve adds bytes and images to the account's usage and to reservation id of an
	// upload to publication noteCUID, which it creates when create is set and which
	// expires at expires: ErrQuotaExceeded when
	// the bytes would pass quota, a *TooManyImagesError when the images would pass
	// MaxImagesPerAccount (both hold under concurrent reservations), ErrUploadExpired when
	// the reservation to add to is gone. The account's images of noteCUID named in
	// replaces, which committing the upload releases, are not counted against either
	// limit (a replacement is charged the difference).
	Reserve(ctx context.Context, id, noteCUID, accountCUID string, create bool, bytes int64, images int, replaces []string, quota int64, expires time.Time) error
	// Release takes reservation id's bytes and images off the account's usage and deletes
	// it; releasing a reservation that does not exist does nothing.
	Release(ctx context.Context, id string) error
	// Update locks the owner's published (active or expired) publication, stores a
	// snapshot of it, calls apply with it, the names of its images (with those of
	// images) and a ResolveTitles that reads within the transaction, and saves the
	// result, all in one transaction. images are new images whose bytes are reserved
	// under reservation, settled as Create does; an image of the same name is replaced:
	// released, and its bytes taken off the account's usage. Only the MaxVersions newest
	// snapshots are kept.
	Update(ctx context.Context, cuid, accountCUID string, now time.Time, images []StoredImage, reservation string,
		apply func(p *Publication, images []string, resolve ResolveTitles) error) (Publication, error)
	// Versions lists the snapshots of the owner's published publication, newest first.
	Versions(ctx context.Context, cuid, accountCUID string) ([]VersionMeta, error)
	// Version returns one snapshot; ErrNotFound for an unknown or pruned number.
	Version(ctx context.Context, cuid, accountCUID string, number int64) (Version, error)
	// Unpublish ends public access and releases the images' bytes from the quota at once.
	Unpublish(ctx context.Context, cuid, accountCUID string, now time.Time) error
	// List returns up to limit of the owner's published publications after the cursor,
	// newest first, ties broken by cuid.
	List(ctx context.Context, accountCUID string, after *Cursor, limit int) ([]Publication, error)
	// FindView returns the publication in any state with its owner's settings, in one
	// query; ErrNotFound when there is none.
	FindView(ctx context.Context, cuid string) (View, error)
	// SaveRender stores p's render (HTML, RenderVersion, RenderID, Links, RenderTries,
	// RenderMisses and RenderRetry), unless the publication changed since (its etag is
	// no longer p.ETag), its render is no longer the one named prev (another was
	// stored), or a newer renderer stored its own.
	SaveRender(ctx context.Context, p Publication, prev string) error
	// ClaimRenders takes up to limit of the publications (not unpublished) whose render
	// is older than version (0: missing or temporary) and whose RenderRetry is not after
	// now, moves their RenderRetry to until, so that no other process takes them before
	// then, and returns their cuids.
	ClaimRenders(ctx context.Context, version int, now, until time.Time, limit int) ([]string, error)
	// ResolveTitles maps those of titles that are the title of one of the account's
	// active publications at now to it: the most recently updated one.
	ResolveTitles(ctx context.Context, accountCUID string, titles []string, now time.Time) (map[string]LinkTarget, error)
	// FindImageView returns an image (not its bytes), its publication's state and the
	// owner's settings, in one query; ErrNotFound when there is no such image.
	FindImageView(ctx context.Context, userCUID, noteCUID, filename string) (ImageView, error)
	// LegacyImage returns the bytes of an image that a release before the object store
	// kept in the database; ErrNotFound when it has none under key.
	LegacyImage(ctx context.Context, key string) ([]byte, error)
	// CursorKey returns the installation's cursor MAC key, making it on first use.
	CursorKey(ctx context.Context) ([]byte, error)
}

// Renderer turns a note's Markdown into sanitized HTML within bounds; libs/render
// implements it.
type Renderer interface {
	// Render renders markdown for tenant (an account; renders wait for a slot in a queue
	// that is fair between tenants). Its note links are left as placeholders.
	Render(ctx context.Context, tenant, markdown string) (Rendered, error)
	// ResolveLinks returns html, a render with links, with link i leading to urls[i], or
	// shown as text where urls[i] is "".
	ResolveLinks(html string, links Links, urls []string) string
	// Version identifies the renderer's output; stored renders of an older version are
	// rendered again in the background.
	Version() int
}

// Rendered is a note's render.
type Rendered struct {
	HTML string
	// Fallbacks are the blocks the renderer had to show as plain text.
	Fallbacks []Fallback
	// Links are the note links whose placeholders HTML holds.
	Links Links
	// Miss is why the note was shown whole as plain text, when the reason may pass.
	Miss Miss
}

// Miss says why a render showed a note whole as plain text for now.
type Miss int

// The misses.
const (
	// MissNone: the render is what the note makes.
	MissNone Miss = iota
	// MissBusy: the renderer was busy with other work.
	MissBusy
	// MissDeadline: the note missed its own time bound while it had a render slot.
	MissDeadline
)

// Fallback is a block the renderer showed as plain text because it missed a bound.
type Fallback struct {
	Ref    string // The block's first line.
	Reason string
}

// Notifier tells every process that a publication changed, so that cached public reads
// of it are dropped everywhere.
type Notifier interface {
	NoteChanged(ctx context.Context, cuid string)
	// LinksChanged says that what the account's note links lead to may have changed (a
	// note of it was published, retitled, unpublished, or its expiry changed): cached
	// pages of all its notes are dropped, in one message however many link there.
	LinksChanged(ctx context.Context, accountCUID string)
}

// Config is what a Core is built from.
type Config struct {
	// Now is the clock.
	Now func() time.Time
	// PublicURL is {base_url}.
	PublicURL string
	// Quota is the image storage per account in bytes.
	Quota    int64
	Renderer Renderer
	// Blobs keeps the image bytes.
	Blobs blob.Store
	// Notifier is told of every change; nil tells no one (a single process without caches).
	Notifier Notifier
	// Log records what background work could not do; nil is slog.Default().
	Log *slog.Logger
	// Registerer takes the core's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// Core implements the publication use cases.
type Core struct {
	store     Storer
	now       func() time.Time
	publicURL string
	quota     int64
	renderer  Renderer
	blobs     blob.Store
	notifier  Notifier
	log       *slog.Logger
	renders   *prometheus.CounterVec

	keyMu     sync.Mutex
	cursorKey []byte
}

// NewCore returns the use cases on store.
func NewCore(store Storer, cfg Config) *Core {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	renders := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sharenote_note_renders_total",
		Help: "Renders of notes' Markdown, by cause (publish, update, background) and outcome (final, temporary)."},
		[]string{"cause", "outcome"})
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(renders)
	}
	return &Core{store: store, now: cfg.Now, publicURL: cfg.PublicURL, quota: cfg.Quota, renderer: cfg.Renderer, blobs: cfg.Blobs,
		notifier: cfg.Notifier, log: log, renders: renders}
}

// Now returns the core's clock reading, truncated to the milliseconds timestamps carry.
func (c *Core) Now() time.Time { return c.now().UTC().Truncate(time.Millisecond) }

// Clock returns the time by which the core judges expiry: Now without the truncation.
func (c *Core) Clock() time.Time { return c.now() }

// PublicURL returns {base_url}, under which the edges build the public URLs they answer
// with (routes.Route.URL).
func (c *Core) PublicURL() string { return c.publicURL }

// Publish creates a publication from a draft: frontmatter becomes properties (request
// properties win per key), a frontmatter title is the title when none was given, image
// wikilinks become image URLs, and the images are stored and charged to the account.
func (c *Core) Publish(ctx context.Context, accountCUID string, d Draft) (Publication, error) {
	now := c.Now()
	p := Publication{CUID: cuid.New(), AccountCUID: accountCUID, CreatedAt: now, UpdatedAt: now,
		Text: Text{Title: d.Title, Summary: d.Summary, ShowProperties: d.ShowProperties, ExpiresAt: d.ExpiresAt}}
	var images []StoredImage
	reservation := ""
	if d.Upload != nil {
		p.CUID, images, reservation = d.Upload.cuid, d.Upload.images, d.Upload.id
	}
	names := make([]string, len(images))
	for i, img := range images {
		names[i] = img.Filename
	}
	if err := c.setContent(&p, d.Content, d.Properties, d.Title != nil, names); err != nil {
		return Publication{}, err
	}
	if err := checkSize(&p); err != nil {
		return Publication{}, err
	}
	if err := c.render(ctx, &p, c.store.ResolveTitles, causePublish); err != nil {
		return Publication{}, err
	}
	p.ETag = newETag()
	if err := c.store.Create(ctx, p, images, reservation); err != nil {
		return Publication{}, fmt.Errorf("publish: %w", err)
	}
	if d.Upload != nil {
		d.Upload.done = true
	}
	// A process may have cached that this cuid does not exist.
	c.notify(ctx, p.CUID)
	if p.Title != nil {
		c.notifyLinks(ctx, accountCUID)
	}
	return p, nil
}

// newETag makes a publication etag: random, so that no two states share one.
func newETag() string { return cuid.New() }

func (c *Core) notify(ctx context.Context, cuid string) {
	if c.notifier != nil {
		c.notifier.NoteChanged(ctx, cuid)
	}
}

func (c *Core) notifyLinks(ctx context.Context, accountCUID string) {
	if c.notifier != nil {
		c.notifier.LinksChanged(ctx, accountCUID)
	}
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
	urls := make(map[string]string, len(images))
	for _, name := range images {
		urls[name] = routes.ImageRead.URL(c.publicURL, p.AccountCUID, p.CUID, name)
	}
	body = ReplaceImageLinks(body, urls)
	p.Content = body
	p.Warnings = append(p.Warnings, referenceWarnings(body, urls)...)
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

func equalTitles(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
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

// ReadImage returns a public image with its bytes and its publication's view:
// ErrNotFound unless the publication is active.
func (c *Core) ReadImage(ctx context.Context, userCUID, noteCUID, filename string) (ImageView, error) {
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
func (c *Core) OpenImage(ctx context.Context, img StoredImage, off, n int64) (io.ReadCloser, error) {
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
