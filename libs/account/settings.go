package account

import (
	"context"
	"encoding/hex"
	"fmt"
	"image/color"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Settings are an account's sharing settings (docs/api.md "Settings").
type Settings struct {
	Name        string
	ShowAuthor  bool
	Theme       string
	AccentColor string
	Font        string
	Indexable   bool
}

// DefaultSettings are the settings of a new account called name.
func DefaultSettings(name string) Settings {
	return Settings{Name: name, ShowAuthor: true, Theme: "system", AccentColor: "#5b6ee1", Font: "sans"}
}

// Storage is an account's image storage use.
type Storage struct {
	ImageBytesUsed  int64
	ImageLimitBytes int64
}

// Profile is an account's settings with its storage figures.
type Profile struct {
	Settings Settings
	Storage  Storage
}

// FieldError is a settings field with a wrong type or value, or a field that is not a
// settings field: the change is refused and Reason says why.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s %s", e.Field, e.Reason) }

// SettingsChange is a change of an account's settings as a client asks for it (PUT or
// PATCH /api/user/settings, decoded by the edge): a nil field is one the request does not
// give.
type SettingsChange struct {
	// Replace resets every field not given to its default (PUT); without it such fields
	// keep their values (PATCH).
	Replace     bool
	Name        *string
	ShowAuthor  *bool
	Theme       *string
	AccentColor *string
	Font        *string
	Indexable   *bool
}

// Apply returns base changed by ch and validated; name is the account's name, the default
// of the settings' name. A bad value is a *FieldError.
func (ch SettingsChange) Apply(base Settings, name string) (Settings, error) {
	s := base
	if ch.Replace {
		s = DefaultSettings(name)
	}
	set(&s.Name, ch.Name)
	set(&s.ShowAuthor, ch.ShowAuthor)
	set(&s.Theme, ch.Theme)
	set(&s.AccentColor, ch.AccentColor)
	set(&s.Font, ch.Font)
	set(&s.Indexable, ch.Indexable)
	return s, s.Validate()
}

// set stores the given value v, if any, in dst.
func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// SettingsStorer is what the settings use cases need from storage.
type SettingsStorer interface {
	// Profile returns the account's name, settings and image bytes used; ErrNotFound when
	// the account does not exist.
	Profile(ctx context.Context, accountCUID string) (name string, p Profile, err error)
	// ChangeSettings reads the account's name and profile, calls change with them and
	// stores the settings it returns, all in one transaction that no other change of the
	// account's settings can interleave with, and returns the profile with the stored
	// settings. An error of change is returned as it is, and nothing is stored;
	// ErrNotFound when the account does not exist.
	ChangeSettings(ctx context.Context, accountCUID string, change func(name string, p Profile) (Settings, error)) (Profile, error)
}

var (
	themes = []string{"system", "light", "dark"}
	fonts  = []string{"sans", "serif", "mono"}
)

// Validate checks every field against the rules of docs/api.md "Settings" and normalises
// the colour to lowercase.
func (s *Settings) Validate() error {
	n := utf8.RuneCountInString(s.Name)
	switch {
	case n < 1 || n > 100 || strings.TrimSpace(s.Name) == "" || strings.ContainsFunc(s.Name, unicode.IsControl):
		return &FieldError{Field: "name", Reason: "must be 1 to 100 characters, not blank, without control characters"}
	case !slices.Contains(themes, s.Theme):
		return &FieldError{Field: "theme", Reason: "must be one of system, light, dark"}
	case !slices.Contains(fonts, s.Font):
		return &FieldError{Field: "font", Reason: "must be one of sans, serif, mono"}
	case !validColour(s.AccentColor):
		return &FieldError{Field: "accent_color", Reason: "must be a colour #rrggbb"}
	}
	s.AccentColor = strings.ToLower(s.AccentColor)
	return nil
}

// SettingsCore implements the settings use cases.
type SettingsCore struct {
	store    SettingsStorer
	quota    int64
	notifier Notifier
}

// NewSettingsCore returns the settings use cases on store; quota is the image storage
// per account that the storage figures report; notifier (nil: no one) is told of every
// change.
func NewSettingsCore(store SettingsStorer, quota int64, notifier Notifier) *SettingsCore {
	return &SettingsCore{store: store, quota: quota, notifier: notifier}
}

// Get returns the account's settings and storage.
func (c *SettingsCore) Get(ctx context.Context, accountCUID string) (Profile, error) {
	_, p, err := c.store.Profile(ctx, accountCUID)
	if err != nil {
		return Profile{}, fmt.Errorf("settings: %w", err)
	}
	p.Storage.ImageLimitBytes = c.quota
	return p, nil
}

// Change applies ch to the account's settings and returns the new profile. The read of
// the current settings and the save are one transaction, so that concurrent PATCHes of
// different fields each keep the other's change.
func (c *SettingsCore) Change(ctx context.Context, accountCUID string, ch SettingsChange) (Profile, error) {
	p, err := c.store.ChangeSettings(ctx, accountCUID, func(name string, p Profile) (Settings, error) {
		return ch.Apply(p.Settings, name)
	})
	if err != nil {
		return Profile{}, fmt.Errorf("change settings: %w", err)
	}
	if c.notifier != nil {
		c.notifier.SettingsChanged(ctx, accountCUID)
	}
	p.Storage.ImageLimitBytes = c.quota
	return p, nil
}

// validColour reports whether s is a colour #rrggbb (either case).
func validColour(s string) bool {
	_, ok := parseColour(s)
	return ok
}

// parseColour reads a colour #rrggbb (either case).
func parseColour(s string) (color.NRGBA, bool) {
	if len(s) != 7 || s[0] != '#' {
		return color.NRGBA{}, false
	}
	b, err := hex.DecodeString(s[1:])
	if err != nil {
		return color.NRGBA{}, false
	}
	return color.NRGBA{R: b[0], G: b[1], B: b[2], A: 0xff}, true
}

// Accent is the accent colour to draw with: the stored one, which Validate has checked,
// or the default's for a row written around it.
func (s Settings) Accent() color.NRGBA {
	if c, ok := parseColour(s.AccentColor); ok {
		return c
	}
	c, _ := parseColour(DefaultSettings("").AccentColor)
	return c
}
