package note

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/cuid"
)

// Core holds the publication use cases, a file each: publish.go, update.go (and
// unpublish), versions.go, list.go, read.go (the public reads), links.go (note links
// resolved when a page is built), render.go (renders, and those redone in the
// background) and upload.go (images). notedb's Store is split the same way.

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
	// Rendered, when set, is told of each render's cause (publish, update, background)
	// and outcome (final, temporary); the app counts them.
	Rendered func(cause, outcome string)
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
	rendered  func(cause, outcome string)
	edits     edits

	keyMu     sync.Mutex
	cursorKey []byte
}

// NewCore returns the use cases on store.
func NewCore(store Storer, cfg Config) *Core {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	rendered := cfg.Rendered
	if rendered == nil {
		rendered = func(string, string) {}
	}
	return &Core{store: store, now: cfg.Now, publicURL: cfg.PublicURL, quota: cfg.Quota, renderer: cfg.Renderer, blobs: cfg.Blobs,
		notifier: cfg.Notifier, log: log, rendered: rendered}
}

// Now returns the core's clock reading, truncated to the milliseconds stored timestamps
// carry; expiry is judged by the clock itself (c.now).
func (c *Core) Now() time.Time { return c.now().UTC().Truncate(time.Millisecond) }

// PublicURL returns {base_url}, under which the edges build the public URLs they answer
// with (routes.Route.URL).
func (c *Core) PublicURL() string { return c.publicURL }

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
