package account

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Settings are an account's sharing settings (CONTRACT.md "Settings").
type Settings struct {
	Name        string `json:"name"`
	ShowAuthor  bool   `json:"show_author"`
	Theme       string `json:"theme"`
	AccentColor string `json:"accent_color"`
	Font        string `json:"font"`
	Indexable   bool   `json:"indexable"`
}

// DefaultSettings are the settings of a new account called name.
func DefaultSettings(name string) Settings {
	return Settings{Name: name, ShowAuthor: true, Theme: "system", AccentColor: "#5b6ee1", Font: "sans"}
}

// Storage is an account's image storage use.
type Storage struct {
	ImageBytesUsed  int64 `json:"image_bytes_used"`
	ImageLimitBytes int64 `json:"image_limit_bytes"`
}

// Profile is what GET /api/user/settings returns.
type Profile struct {
	Settings Settings `json:"settings"`
	Storage  Storage  `json:"storage"`
}

// FieldError is a settings field with a wrong type or value; the HTTP edge answers 400
// invalid_field with its message.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s %s", e.Field, e.Reason) }

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
	themes     = []string{"system", "light", "dark"}
	fonts      = []string{"sans", "serif", "mono"}
	colourExpr = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
)

// ApplySettings applies a JSON object of settings fields to base and validates the
// result. With replace (PUT) every field missing from the object is reset to its default
// for an account called name; otherwise (PATCH) missing fields keep base's values. An
// unknown field, a null, a wrong type or a bad value is a *FieldError.
func ApplySettings(base Settings, name string, fields map[string]json.RawMessage, replace bool) (Settings, error) {
	s := base
	if replace {
		s = DefaultSettings(name)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys) // Report the first bad field deterministically.
	for _, k := range keys {
		raw := fields[k]
		var err error
		switch k {
		case "name":
			err = decodeField(k, raw, &s.Name)
		case "show_author":
			err = decodeField(k, raw, &s.ShowAuthor)
		case "theme":
			err = decodeField(k, raw, &s.Theme)
		case "accent_color":
			err = decodeField(k, raw, &s.AccentColor)
		case "font":
			err = decodeField(k, raw, &s.Font)
		case "indexable":
			err = decodeField(k, raw, &s.Indexable)
		default:
			err = &FieldError{Field: k, Reason: "is not a settings field"}
		}
		if err != nil {
			return Settings{}, err
		}
	}
	return s, s.Validate()
}

func decodeField(name string, raw json.RawMessage, dst any) error {
	if string(raw) == "null" || json.Unmarshal(raw, dst) != nil {
		kind := "a string"
		if _, ok := dst.(*bool); ok {
			kind = "a boolean"
		}
		return &FieldError{Field: name, Reason: "must be " + kind}
	}
	return nil
}

// Validate checks every field against CONTRACT.md and normalises the colour to lowercase.
func (s *Settings) Validate() error {
	n := utf8.RuneCountInString(s.Name)
	switch {
	case n < 1 || n > 100 || strings.TrimSpace(s.Name) == "" || strings.ContainsFunc(s.Name, unicode.IsControl):
		return &FieldError{Field: "name", Reason: "must be 1 to 100 characters, not blank, without control characters"}
	case !slices.Contains(themes, s.Theme):
		return &FieldError{Field: "theme", Reason: "must be one of system, light, dark"}
	case !slices.Contains(fonts, s.Font):
		return &FieldError{Field: "font", Reason: "must be one of sans, serif, mono"}
	case !colourExpr.MatchString(s.AccentColor):
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

// Change applies fields (replacing all settings when replace) and returns the new profile.
// The read of the current settings and the save are one transaction, so that concurrent
// PATCHes of different fields each keep the other's change.
func (c *SettingsCore) Change(ctx context.Context, accountCUID string, fields map[string]json.RawMessage, replace bool) (Profile, error) {
	p, err := c.store.ChangeSettings(ctx, accountCUID, func(name string, p Profile) (Settings, error) {
		return ApplySettings(p.Settings, name, fields, replace)
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
