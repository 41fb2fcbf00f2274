package client

import (
	"encoding/json"
	"fmt"
	"time"
)

// The types below mirror the schemas of libs/openapi/openapi.yaml (named in each comment);
// a test fails when their JSON fields drift from the document.

// Time is a timestamp of the API: RFC 3339 in UTC with exactly three fractional digits,
// the form it is sent back in.
type Time struct{ time.Time }

const timeLayout = "2006-01-02T15:04:05.000Z"

// MarshalJSON writes the API's form of the time.
func (t Time) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.UTC().Format(timeLayout))
}

// UnmarshalJSON reads any RFC 3339 time.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// Properties are a note's structured properties. Numbers decode as json.Number, so they
// are printed back exactly as the API sent them.
type Properties = map[string]any

// Token is the session token response (schema TokenResponse).
type Token struct {
	Token     string `json:"token"`
	ExpiresAt Time   `json:"expires_at"`
	UserCuid  string `json:"user_cuid"`
	User      User   `json:"user"`
}

// User is the sharing account of a token; its name and email come from the license.
type User struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// TokenRequest is the body of POST /api/auth/publish (schema TokenRequest).
type TokenRequest struct {
	LicenseKey string `json:"license_key"`
	InstanceID string `json:"instance_id"`
}

// PublicNote is the public JSON of a note (schema PublicNote, camelCase).
type PublicNote struct {
	Cuid           string     `json:"cuid"`
	URL            string     `json:"url"`
	Title          *string    `json:"title"`
	Summary        *string    `json:"summary"`
	Content        string     `json:"content"`
	Author         *string    `json:"author"`
	Appearance     Appearance `json:"appearance"`
	PublishedAt    Time       `json:"publishedAt"`
	UpdatedAt      Time       `json:"updatedAt"`
	ExpiresAt      *Time      `json:"expiresAt"`
	ShowProperties bool       `json:"showProperties"`
	Properties     Properties `json:"properties"`
}

// Appearance is the owner's appearance settings in a public note (schema Appearance).
type Appearance struct {
	Theme       string `json:"theme"`
	AccentColor string `json:"accentColor"`
	Font        string `json:"font"`
}

// Optional is a field of an update that may also be cleared: the zero value is not sent,
// Set(v) sends v and Clear() sends null.
type Optional[T any] struct {
	value T
	state uint8 // 0 unset, 1 set, 2 cleared
}

// Set returns an Optional that sends v.
func Set[T any](v T) Optional[T] { return Optional[T]{value: v, state: 1} }

// Clear returns an Optional that sends null, which clears the field.
func Clear[T any]() Optional[T] { return Optional[T]{state: 2} }

// IsZero reports whether the field is left out of the request (for omitzero).
func (o Optional[T]) IsZero() bool { return o.state == 0 }

// MarshalJSON writes the value, or null for a cleared field.
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if o.state == 2 {
		return []byte("null"), nil
	}
	return json.Marshal(o.value)
}

// NoteUpdate is the JSON body of PATCH /api/notes/:cuid (schema NoteUpdate): only the
// fields to change.
type NoteUpdate struct {
	Content        *string              `json:"content,omitempty"`
	Title          Optional[string]     `json:"title,omitzero"`
	Summary        Optional[string]     `json:"summary,omitzero"`
	Properties     Optional[Properties] `json:"properties,omitzero"`
	ShowProperties *bool                `json:"show_properties,omitempty"`
	ExpiresAt      Optional[string]     `json:"expires_at,omitzero"`
}

// OwnerNote is a publication as its owner sees it, the answer to PATCH (schema OwnerNote).
type OwnerNote struct {
	Cuid           string     `json:"cuid"`
	URL            string     `json:"url"`
	Title          *string    `json:"title"`
	Summary        *string    `json:"summary"`
	Content        string     `json:"content"`
	Properties     Properties `json:"properties"`
	ShowProperties bool       `json:"show_properties"`
	ExpiresAt      *Time      `json:"expires_at"`
	Status         string     `json:"status"`
	CreatedAt      Time       `json:"created_at"`
	UpdatedAt      Time       `json:"updated_at"`
	// ETag changes with every change by the owner: pass it to Update to change only the
	// state seen here.
	ETag     string    `json:"etag"`
	Warnings []Warning `json:"warnings"`
}

// Warning is something a publish or update did that its author may not expect (schema
// Warning).
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Ref     string `json:"ref"`
}

// VersionList lists the kept snapshots of a publication, newest first (schema VersionList).
type VersionList struct {
	Versions []VersionMeta `json:"versions"`
}

// VersionMeta describes one snapshot (schema VersionMeta).
type VersionMeta struct {
	Version      int     `json:"version"`
	CreatedAt    Time    `json:"created_at"`
	Title        *string `json:"title"`
	ContentBytes int     `json:"content_bytes"`
}

// Version is one snapshot: the state before the update that created it (schema Version).
type Version struct {
	Version        int        `json:"version"`
	CreatedAt      Time       `json:"created_at"`
	Title          *string    `json:"title"`
	Summary        *string    `json:"summary"`
	Content        string     `json:"content"`
	Properties     Properties `json:"properties"`
	ShowProperties bool       `json:"show_properties"`
	ExpiresAt      *Time      `json:"expires_at"`
}

// Unshared is the answer to POST /api/unshare (schema UnshareResponse).
type Unshared struct {
	Cuid   string `json:"cuid"`
	Status string `json:"status"`
}

// NoteList is one page of the caller's publications (schema NoteList).
type NoteList struct {
	Notes []NoteListItem `json:"notes"`
	// NextCursor is nil on the last page.
	NextCursor *string `json:"next_cursor"`
}

// NoteListItem is one publication of a list page (schema NoteListItem).
type NoteListItem struct {
	Cuid      string  `json:"cuid"`
	URL       string  `json:"url"`
	Title     *string `json:"title"`
	Summary   *string `json:"summary"`
	Status    string  `json:"status"`
	CreatedAt Time    `json:"created_at"`
	UpdatedAt Time    `json:"updated_at"`
	ExpiresAt *Time   `json:"expires_at"`
	ETag      string  `json:"etag"`
}

// Profile is the answer of every settings operation (schema Profile).
type Profile struct {
	Settings Settings `json:"settings"`
	Storage  Storage  `json:"storage"`
}

// Settings are the account's sharing settings (schema Settings).
type Settings struct {
	Name        string `json:"name"`
	ShowAuthor  bool   `json:"show_author"`
	Theme       string `json:"theme"`
	AccentColor string `json:"accent_color"`
	Font        string `json:"font"`
	Indexable   bool   `json:"indexable"`
}

// Storage is the account's image storage use (schema Storage).
type Storage struct {
	ImageBytesUsed  int64 `json:"image_bytes_used"`
	ImageLimitBytes int64 `json:"image_limit_bytes"`
}

// SettingsInput is the body of PUT and PATCH /api/user/settings (schema SettingsInput):
// nil fields are left out (PATCH keeps them, PUT resets them to their defaults).
type SettingsInput struct {
	Name        *string `json:"name,omitempty"`
	ShowAuthor  *bool   `json:"show_author,omitempty"`
	Theme       *string `json:"theme,omitempty"`
	AccentColor *string `json:"accent_color,omitempty"`
	Font        *string `json:"font,omitempty"`
	Indexable   *bool   `json:"indexable,omitempty"`
}

// PublishRequest is a note to publish (schema PublishJSON; with Images, the form fields
// of PublishMultipart). Content may start with YAML frontmatter, which the server parses
// into properties; the other fields are optional.
type PublishRequest struct {
	Content string  `json:"content"`
	Title   *string `json:"title,omitempty"`
	Summary *string `json:"summary,omitempty"`
	// ShowProperties nil means true.
	ShowProperties *bool      `json:"show_properties,omitempty"`
	Properties     Properties `json:"properties,omitempty"`
	// ExpiresAt is RFC 3339 or a date YYYY-MM-DD (00:00 UTC that day).
	ExpiresAt *string `json:"expires_at,omitempty"`
	// Images are sent with the note, each under its Name: `[[Name]]` and `![[Name]]` in
	// Content become the image's public URL.
	Images []Image `json:"-"`
}

// PublishResponse is the answer to Publish (schema PublishResponse).
type PublishResponse struct {
	Cuid string `json:"cuid"`
	URL  string `json:"url"`
	// ETag is the publication's etag, for Update's ifMatch.
	ETag     string    `json:"etag"`
	Warnings []Warning `json:"warnings"`
}
