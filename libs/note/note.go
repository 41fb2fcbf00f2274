// Package note is the domain of publications: what a published note is, its states
// (active, expired, unpublished), its version snapshots and images, and the parsers of the
// untrusted input that becomes a note (frontmatter, wikilinks, image files, cursors and
// expiry dates).
package note

import (
	"context"
	"errors"
	"time"

	"github.com/sharenote/sharenote/libs/account"
)

// Limits of docs/api.md "Limits".
const (
	// MaxNoteBytes bounds the stored note data: content, title, summary and properties.
	MaxNoteBytes = 1_900_000
	// MaxImageBytes bounds one image.
	MaxImageBytes = 5 << 20
	// MaxVersions is how many snapshots are kept per publication.
	MaxVersions = 10
	// ListDefault and ListMax bound a page of the owner's list.
	ListDefault = 50
	ListMax     = 100
)

// Domain errors. Parsers wrap the Invalid… errors with a reason a person can act on.
var (
	ErrNotFound          = errors.New("not found")
	ErrNoteTooLarge      = errors.New("stored note data too large")
	ErrQuotaExceeded     = errors.New("image storage quota exceeded")
	ErrInvalidProperties = errors.New("invalid properties")
	ErrInvalidImage      = errors.New("invalid image")
	ErrInvalidCursor     = errors.New("invalid cursor")
	ErrInvalidExpiry     = errors.New("invalid expiry")
	ErrInvalidText       = errors.New("invalid text")
	// ErrStale: the update was made against an etag the publication no longer has.
	ErrStale = errors.New("the publication has changed since the given etag")
	// ErrBusy is an update whose publication changed each time it was decided (twice
	// for new content, which is rendered again once; 5 times without): it changed
	// nothing, and may be tried again.
	ErrBusy = errors.New("the publication kept changing while the update was decided")
)

// Status is a publication's state.
type Status string

// The states of docs/api.md "Publications and their states".
const (
	Active      Status = "active"
	Expired     Status = "expired"
	Unpublished Status = "unpublished"
)

// Text is a note as its author wrote it, parsed: what a publication holds and what each of
// its versions keeps.
type Text struct {
	Title          *string
	Summary        *string
	Content        string
	Properties     map[string]any
	ShowProperties bool
	ExpiresAt      *time.Time
	// Path is where the note lives in its author's vault (CheckPath), unique among the
	// account's active and expired publications; nil for none.
	Path *string
}

// Publication is a published note.
type Publication struct {
	CUID        string
	AccountCUID string
	Text
	Unpublished bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// HTML is Content rendered and sanitized by version RenderVersion of the renderer, with
	// its note links as placeholders (Links); a RenderVersion of 0 means not rendered yet,
	// or rendered for now only (see RenderTries).
	HTML          string
	RenderVersion int
	// RenderID names the render in HTML: a new value with every render stored.
	RenderID string
	// Links are the note links of HTML, resolved when a page is built (Reader.ReadPage),
	// and Outline the render's outline (Rendered.Outline), for the links into this note.
	Links   Links
	Outline string
	// RenderTries counts the temporary renders of the content (plain text because the
	// renderer was busy or the note missed its time bound), and RenderMisses those that
	// missed the note's own bound; RenderRetry is when the background renderer may take
	// the publication again (zero: it need not).
	RenderTries  int
	RenderMisses int
	RenderRetry  time.Time
	// ETag is the publication's validator for If-Match: a new value with every change its
	// owner makes, and only then (not with settings changes or re-renders).
	ETag string
	// Warnings are what the author should know about the Publish or Update that returned
	// this publication; they are not stored.
	Warnings []Warning
}

// View is an active publication as the public sees it: with its owner's settings.
type View struct {
	Publication
	Owner account.Settings
	// LinksTag names what the note links of HTML resolved to and the renders of the notes
	// it embeds, and LinksExpireAt is the earliest expiry among the notes they lead to or
	// it embeds (nil when none expires): from then on the page leads to, or shows, a note
	// that is gone. Embeds are the publications whose renders the page shows. They are set
	// by Reader.ReadPage only, as are Linked, the publications its links lead to (each once,
	// in the order first met).
	LinksTag      string
	LinksExpireAt *time.Time
	Embeds        []string
	Linked        []string
	// Unchanged tells, with one read, whether ReadPage would build the same page now (its
	// sources are unchanged: pagestate.go); nil for a view that ReadPage did not build
	// from other notes.
	Unchanged func(ctx context.Context) (bool, error)
}

// Links are the note links of a stored render: the nonce of their placeholders in its
// HTML and, by index, what each names.
type Links struct {
	Nonce string
	List  []Link
}

// Link is a note link: its target as written (a path, a base name, an alias or a title;
// see resolveLinks) and its fragment after the first "#" ("" for none).
type Link struct {
	Target   string
	Fragment string
	// Embed: `![[Target]]`, shown inside the page when it can be (see ReadPage).
	Embed bool
}

// ImageView is a public image with the publication it belongs to. Of the publication it
// carries the state (expiry, unpublished, etag, update time) and the owner's settings,
// not the content.
type ImageView struct {
	Image StoredImage
	Note  View
}

// Warning is something a publish or update did that its author may not expect
// (docs/api.md "Stale updates and warnings").
type Warning struct {
	Code    string
	Message string
	// Ref points the author to the spot: a block's first line, a file or link name.
	Ref string
}

// Warning codes.
const (
	// WarnRenderFallback: a block missed a rendering bound and is shown as plain text.
	WarnRenderFallback = "render_fallback"
	// WarnUnresolvedReference: an image reference names no image of the note.
	WarnUnresolvedReference = "unresolved_reference"
	// WarnUnusedImage: an image of the note is not shown by its content.
	WarnUnusedImage = "unused_image"
	// WarnUnknownNoteLink: a note link names none of the author's active publications.
	WarnUnknownNoteLink = "unknown_note_link"
)

// Status returns the state at now: expiry is computed at read time, no job moves it.
func (p *Publication) Status(now time.Time) Status {
	switch {
	case p.Unpublished:
		return Unpublished
	case p.ExpiresAt != nil && !now.Before(*p.ExpiresAt):
		return Expired
	default:
		return Active
	}
}

// Cursor is a position in the owner's list, newest first: the last row of a page.
type Cursor struct {
	CreatedMS int64
	CUID      string
}
