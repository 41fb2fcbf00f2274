package note

import (
	"log/slog"
	"time"

	"github.com/sharenote/sharenote/libs/cuid"
)

// The note domain is a use case type per job, each over a port of its own (ports.go),
// built by its constructor with what it cannot work without as arguments:
//   - Publisher (publish.go, update.go, upload.go): publish, update and unpublish, and the
//     uploads of their images;
//   - Reader (read.go, links.go, embeds.go, pagestate.go): the public page of a note, its
//     note links resolved and its embeds shown;
//   - Cards and Images (read.go): what a preview card draws, and a note's images;
//   - Renders (render.go): renders redone and names indexed in the background;
//   - History (list.go, versions.go): the owner's list of notes and their versions;
//   - Reaper (reaper.go): what the reaper deletes.
//
// The rules they share (rendering, resolving links, deciding what a change touches, telling
// the caches) are core's, unexported.

// Config is what the use cases are configured with, besides the stores, renderer and
// object store their constructors take.
type Config struct {
	// Now is the clock.
	Now func() time.Time
	// PublicURL is {base_url}.
	PublicURL string
	// Quota is the image storage per account in bytes.
	Quota int64
	// Notifier is told of every change; nil tells no one (a single process without caches).
	Notifier Notifier
	// Log records what background work could not do; nil is slog.Default().
	Log *slog.Logger
	// Rendered, when set, is told of each render's cause (publish, update, background)
	// and outcome (final, temporary); the app counts them.
	Rendered func(cause, outcome string)
}

// core is what the use cases share.
type core struct {
	now       func() time.Time
	publicURL string
	// renderer is nil in the use cases that render nothing and resolve no link (Cards,
	// Images).
	renderer Renderer
	notifier Notifier
	log      *slog.Logger
	rendered func(cause, outcome string)
}

// newCore is the core of a use case named name (for the panic of a missing renderer)
// configured by cfg; needsRenderer says whether it renders or resolves links.
func newCore(name string, cfg Config, renderer Renderer, needsRenderer bool) *core {
	if needsRenderer && renderer == nil {
		panic("note: " + name + " needs a renderer")
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	rendered := cfg.Rendered
	if rendered == nil {
		rendered = func(string, string) {}
	}
	return &core{now: cfg.Now, publicURL: cfg.PublicURL, renderer: renderer, notifier: cfg.Notifier, log: log, rendered: rendered}
}

// stamp is the clock's reading truncated to the milliseconds stored timestamps carry;
// expiry is judged by the clock itself (c.now).
func (c *core) stamp() time.Time { return c.now().UTC().Truncate(time.Millisecond) }

// newETag makes a publication etag: random, so that no two states share one.
func newETag() string { return cuid.New() }
