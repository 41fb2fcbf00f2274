// Package note is the domain of publications: what a published note is, its states
// (active, expired, unpublished), its version snapshots and images, and the parsers of the
// untrusted input that becomes a note (frontmatter, wikilinks, image files, cursors and
// expiry dates).
package note

import (
	"errors"
	"time"
)

// Limits of SPEC.md "Limits".
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
)

// Status is a publication's state.
type Status string

// The states of SPEC.md "States and transitions".
const (
	Active      Status = "active"
	Expired     Status = "expired"
	Unpublished Status = "unpublished"
)

// Publication is a published note.
type Publication struct {
	CUID           string
	AccountCUID    string
	Title          *string
	Summary        *string
	Content        string
	Properties     map[string]any
	ShowProperties bool
	ExpiresAt      *time.Time
	Unpublished    bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

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
