package note

import (
	"context"
	"time"

	"github.com/sharenote/sharenote/libs/render"
)

// LinkStore reads what note links lead to: the link index and the outlines of renders.
type LinkStore interface {
	// ResolveNames finds in the link index the account's publications active at now that
	// have one of keys (match keys) among their names (Text.Names), each with the names
	// it matched by.
	ResolveNames(ctx context.Context, accountCUID string, keys []string, now time.Time) ([]NameHit, error)
	// Outlines returns the stored render outlines (Rendered.Outline) of the publications
	// cuids, by cuid.
	Outlines(ctx context.Context, cuids []string) (map[string]string, error)
}

// ViewStore reads a publication with its owner's settings.
type ViewStore interface {
	// FindView returns the publication in any state with its owner's settings, in one
	// query; ErrNotFound when there is none.
	FindView(ctx context.Context, cuid string) (View, error)
}

// Owned names a publication by its owner's account and its cuid, as the stores' methods
// that act for the owner take it: one argument, so that the two cannot be swapped.
type Owned struct {
	Account, CUID string
}

// PublishStore is what Publisher needs of storage; notedb.Store implements it.
type PublishStore interface {
	LinkStore
	ViewStore
	// Create stores p with its images, whose bytes are in the object store and reserved
	// against the account under reservation, which it settles in the same transaction:
	// ErrUploadExpired when the reservation is gone (the reaper released it).
	Create(ctx context.Context, p Publication, images []StoredImage, reservation string, change Change) error
	// Editable returns the owner's published (active or expired) publication as an update
	// decides from it, with the names of its images and those of images (Current).
	Editable(ctx context.Context, n Owned, images []StoredImage) (Current, error)
	// Commit stores e in one transaction, or nothing of it: ErrStale when the publication
	// no longer has the etag e was decided on (e.From), ErrNotFound when it is not the
	// owner's or is unpublished, ErrUploadExpired when e.Reservation is gone, a
	// *PathTakenError when another publication has e.To's path. It holds no lock
	// between Editable and Commit.
	Commit(ctx context.Context, e Edit) error
	// Unpublish ends public access, releases the images' bytes from the quota at once and
	// writes change to the edge's outbox, in one transaction.
	Unpublish(ctx context.Context, n Owned, now time.Time, change Change) error
}

// UploadStore holds the quota reservations of uploads (Upload); notedb.Store implements it.
type UploadStore interface {
	// Reserve adds r's bytes and images to the account's usage and to the reservation
	// (Reservation): ErrQuotaExceeded when the bytes would pass r.Quota, a
	// *TooManyImagesError when the images would pass MaxImagesPerAccount (both hold under
	// concurrent reservations), ErrUploadExpired when the reservation to add to is gone.
	// The account's images of r.Note named in r.Replaces, which committing the upload
	// releases, are not counted against either limit (a replacement is charged the
	// difference).
	Reserve(ctx context.Context, r Reservation) error
	// Release takes reservation id's bytes and images off the account's usage and deletes
	// it; releasing a reservation that does not exist does nothing.
	Release(ctx context.Context, id string) error
}

// ReadStore is what Reader needs of storage: reads only; notedb.Reads implements it.
type ReadStore interface {
	LinkStore
	ViewStore
	// Embedded returns the stored renders of those of the publications cuids that are
	// the account's and active at now, in one query: the HTML of the smallest of them
	// that fit maxBytes together, the others without it (Embedded.Over), never read.
	Embedded(ctx context.Context, accountCUID string, cuids []string, now time.Time, maxBytes int) ([]Embedded, error)
	// PageState reads, in one statement, the state of a page's sources (PageSources):
	// the account's settings, those of the publications cuids that are the account's and
	// not unpublished, and the account's link index rows of keys active at now.
	PageState(ctx context.Context, accountCUID string, cuids, keys []string, now time.Time) (PageState, error)
}

// CardStore is what Cards needs of storage; notedb.Reads implements it.
type CardStore interface {
	// FindCard is FindView narrowed to what shows no body: the publication's cuid,
	// account, title, summary, path, properties (for the description), expiry and state
	// (no content or render).
	FindCard(ctx context.Context, cuid string) (View, error)
}

// ImageStore is what Images needs of storage; notedb.Reads implements it.
type ImageStore interface {
	// FindImageView returns an image (not its bytes), its publication's state and the
	// owner's settings, in one query; ErrNotFound when there is no such image.
	FindImageView(ctx context.Context, userCUID, noteCUID, filename string) (ImageView, error)
	// LegacyImage returns the bytes of an image that a release before the object store
	// kept in the database; ErrNotFound when it has none under key.
	LegacyImage(ctx context.Context, key string) ([]byte, error)
}

// RenderStore is what Renders needs of storage; notedb.Store implements it.
type RenderStore interface {
	ViewStore
	// SaveRender stores p's render (HTML, RenderVersion, RenderID, Links, Outline, RenderTries,
	// RenderMisses and RenderRetry), unless the publication changed since (its etag is
	// no longer p.ETag), its render is no longer the one named prev (another was
	// stored), or a newer renderer stored its own; when it stores a render other than
	// prev, it writes change to the edge's outbox in the same transaction.
	SaveRender(ctx context.Context, p Publication, prev string, change Change) error
	// ClaimRenders takes up to limit of the publications (not unpublished) whose render
	// is older than version (0: missing or temporary) and whose RenderRetry is not after
	// now, moves their RenderRetry to until, so that no other process takes them before
	// then, and returns their cuids.
	ClaimRenders(ctx context.Context, version int, now, until time.Time, limit int) ([]string, error)
	// IndexNames writes the link index rows of up to limit publications whose rows were
	// written by an older NamesVersion (or never), each with its IndexChange, and returns
	// their accounts.
	IndexNames(ctx context.Context, limit int) ([]string, error)
}

// HistoryStore is what History needs of storage; notedb.Store implements it.
type HistoryStore interface {
	// List returns up to limit of the owner's published publications after the cursor,
	// newest first, ties broken by cuid.
	List(ctx context.Context, accountCUID string, after *Cursor, limit int) ([]Publication, error)
	// Versions lists the snapshots of the owner's published publication, newest first.
	Versions(ctx context.Context, n Owned) ([]VersionMeta, error)
	// Version returns one snapshot; ErrNotFound for an unknown or pruned number.
	Version(ctx context.Context, n Owned, number int64) (Version, error)
	// CursorKey returns the installation's cursor MAC key, making it on first use.
	CursorKey(ctx context.Context) ([]byte, error)
}

// Reservation is a charge of an upload's image bytes against its account: reservation
// ID of an upload to publication Note of Account, which Create makes (else it adds to
// it) and which expires at Expires, of Bytes and Images, within Quota bytes; Replaces
// names the note's images the upload replaces.
type Reservation struct {
	ID, Note, Account string
	Create            bool
	Bytes             int64
	Images            int
	Replaces          []string
	Quota             int64
	Expires           time.Time
}

// Renderer turns a note's Markdown into sanitized HTML within bounds; libs/render
// implements it.
type Renderer interface {
	// Render renders markdown for tenant (an account; renders wait for a slot in a queue
	// that is fair between tenants). Its note links are left as placeholders. parsed,
	// when not nil, is called with them as soon as they are known (before Render
	// returns, or never); it does not block.
	Render(ctx context.Context, tenant, markdown string, parsed func(Links)) (Rendered, error)
	// ResolveLinks returns html, a render with links, or a part of one, with link i
	// leading to urls[i] (a whole href), or shown as text where urls[i] is "". An embed i
	// is replaced by embed(i) where that is not "" (Frame's result), with its ids
	// prefixed so that they stay unique; embed may be nil.
	ResolveLinks(html string, links Links, urls []string, embed func(i int) string) string
	// SameAnchors reports whether two outlines give every link the same anchor (the same
	// headings and block ids), whatever else they record.
	SameAnchors(a, b string) bool
	// Cut is the part of html, a render whose outline is outline, that an embed with
	// fragment ("" for the whole note, "Heading", "A#B", "^block") shows; false when there
	// is none.
	Cut(html, outline, fragment string) (string, bool)
	// Frame is an embed of content (a Cut, its links resolved) in the page: framed,
	// below title, which leads to url.
	Frame(content, title, url string) string
	// Anchor is the id, in the render whose outline is outline, that a link's fragment
	// ("Heading", "A#B", "^block") leads to; false when there is none.
	Anchor(outline, fragment string) (string, bool)
	// Version identifies the renderer's output; stored renders of an older version are
	// rendered again in the background.
	Version() int
}

// Rendered is a note's render.
type Rendered struct {
	HTML string
	// Fallbacks are the blocks the renderer had to show as plain text.
	Fallbacks []Fallback
	// Links are the note links whose placeholders HTML holds, and Outline the note's
	// headings and block ids (opaque to the domain; see Renderer.Anchor).
	Links   Links
	Outline string
	// Miss is why the note was shown whole as plain text, when the reason may pass.
	Miss Miss
	// References are the note's references (render.References) as the render's parse
	// found them; nil when it has none or was not parsed (a Miss).
	References []render.Reference
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

// Notifier is told of every change after its commit, so that this process's cached
// public reads of it are dropped at once; the store wrote the change in its commit, from
// where the other processes hear of it (libs/outbox).
type Notifier interface {
	Changed(ctx context.Context, ch Change)
}
