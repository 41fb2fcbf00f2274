// Package wire holds the request and response bodies of the API, as the handlers write
// and read them and as libs/client sends and receives them: one set of types for both
// sides. Each type names its schema in the OpenAPI document (libs/openapi/openapi.yaml);
// a test fails when their JSON fields drift from it.
package wire

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

// Ref names a publication: its cuid and the URL of its page.
type Ref struct {
	Cuid string `json:"cuid"`
	URL  string `json:"url"`
}

// PublicNote is the public JSON of a note (schema PublicNote, camelCase).
type PublicNote struct {
	Ref
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

// NoteUpdate is the JSON body of PATCH /api/notes/:cuid (schema NoteUpdate): only the
// fields to change.
type NoteUpdate struct {
	Content        *string              `json:"content,omitempty"`
	Title          Optional[string]     `json:"title,omitzero"`
	Summary        Optional[string]     `json:"summary,omitzero"`
	Properties     Optional[Properties] `json:"properties,omitzero"`
	ShowProperties *bool                `json:"show_properties,omitempty"`
	ExpiresAt      Optional[string]     `json:"expires_at,omitzero"`
	Path           Optional[string]     `json:"path,omitzero"`
}

// NoteText is what a publication and each of its versions hold, as the owner sees it.
type NoteText struct {
	Title          *string    `json:"title"`
	Summary        *string    `json:"summary"`
	Content        string     `json:"content"`
	Properties     Properties `json:"properties"`
	ShowProperties bool       `json:"show_properties"`
	ExpiresAt      *Time      `json:"expires_at"`
	// Path is where the note lives in its vault; nil for none.
	Path *string `json:"path"`
}

// OwnerNote is a publication as its owner sees it, the answer to PATCH (schema OwnerNote).
type OwnerNote struct {
	Ref
	NoteText
	Status    string `json:"status"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
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
	Version   int  `json:"version"`
	CreatedAt Time `json:"created_at"`
	NoteText
}

// UnshareRequest is the body of POST /api/unshare (schema UnshareRequest).
type UnshareRequest struct {
	Cuid string `json:"cuid"`
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
	Ref
	Title     *string `json:"title"`
	Summary   *string `json:"summary"`
	Path      *string `json:"path"`
	CreatedAt Time    `json:"created_at"`
	UpdatedAt Time    `json:"updated_at"`
	ExpiresAt *Time   `json:"expires_at"`
	Status    string  `json:"status"`
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

// Site is the answer of every site operation (schema Site): the settings, the site's URL
// (null without a handle), and how many notes the change put into the site that were not
// in it (0 on GET); a dry run (?dry_run=true) also names them (nil, left out, otherwise).
type Site struct {
	Enabled          bool         `json:"enabled"`
	Handle           *string      `json:"handle"`
	Roots            []string     `json:"roots"`
	Home             *string      `json:"home"`
	Title            *string      `json:"title"`
	SiteURL          *string      `json:"site_url"`
	NewlyListed      int          `json:"newly_listed"`
	NewlyListedNotes []ListedNote `json:"newly_listed_notes,omitzero"`
}

// ListedNote is a note a change of the site would list (schema ListedNote).
type ListedNote struct {
	Cuid  string  `json:"cuid"`
	Path  string  `json:"path"`
	Title *string `json:"title"`
}

// SiteInput is the body of PUT and PATCH /api/user/site (schema SiteInput): a field left
// out is kept by PATCH and reset by PUT; null resets it.
type SiteInput struct {
	Enabled Optional[bool]     `json:"enabled,omitzero"`
	Handle  Optional[string]   `json:"handle,omitzero"`
	Roots   Optional[[]string] `json:"roots,omitzero"`
	Home    Optional[string]   `json:"home,omitzero"`
	Title   Optional[string]   `json:"title,omitzero"`
}

// PublishRequest is a note to publish (schema PublishJSON; the text fields of
// PublishMultipart). Content may start with YAML frontmatter, which the server parses
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
	// Path is where the note lives in its vault ("Folder/Note.md"): links between the
	// author's notes resolve by it, and the title defaults to its base name.
	Path *string `json:"path,omitempty"`
}

// PublishResponse is the answer to Publish (schema PublishResponse).
type PublishResponse struct {
	Ref
	// ETag is the publication's etag, for Update's ifMatch.
	ETag     string    `json:"etag"`
	Warnings []Warning `json:"warnings"`
}
