// Package site is the domain of sites: an account's published vault as a website at
// /@<handle>/ (CONTRACT "Sites"). It holds the site's settings and their rules, and the
// one rule of what is in a site (Settings.Contains), which every view built from
// several notes applies.
package site

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/note"
)

// Settings are an account's site settings; the zero value is the default (disabled, no
// handle, no roots, the default home and title).
type Settings struct {
	Enabled bool
	// Handle is the site's name in its URLs, lowercase.
	Handle *string
	// Roots are the vault folders whose notes are in the site ("" is the whole vault).
	Roots []string
	// Home is the path of the note shown at the site's root; nil: the first of index.md,
	// Home.md, README.md directly in the first root, else that root's listing.
	Home *string
	// Title is the site's name; nil: its handle.
	Title *string
}

// MaxRoots is how many roots a site has at most.
const MaxRoots = 20

// handlePattern is a handle: 2–40 characters of a-z, 0-9 and "-", starting with a letter
// or digit.
var handlePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,39}$`)

// Change is a change of the settings as a client asks for it (PUT or PATCH
// /api/user/site): each field absent (PATCH keeps it, PUT resets it), null (reset) or a
// value.
type Change struct {
	// Replace resets every field not given (PUT).
	Replace             bool
	Enabled             note.Optional[bool]
	Handle, Home, Title note.Optional[string]
	Roots               note.Optional[[]string]
}

// Empty reports whether the change gives no field.
func (c Change) Empty() bool {
	return !c.Enabled.Set && !c.Handle.Set && !c.Home.Set && !c.Title.Set && !c.Roots.Set
}

// Apply returns s changed by c, checked against the rules with the reserved handles.
func (c Change) Apply(s Settings, reserved []string) (Settings, error) {
	if c.Replace {
		s = Settings{}
	}
	if c.Enabled.Set {
		s.Enabled = c.Enabled.Value != nil && *c.Enabled.Value
	}
	if c.Handle.Set {
		s.Handle = c.Handle.Value
		if s.Handle != nil {
			s.Handle = new(strings.ToLower(*s.Handle))
		}
	}
	if c.Roots.Set {
		s.Roots = nil
		if c.Roots.Value != nil {
			s.Roots = *c.Roots.Value
		}
	}
	if c.Home.Set {
		s.Home = c.Home.Value
	}
	if c.Title.Set {
		s.Title = c.Title.Value
	}
	return s, s.check(reserved)
}

// check reports the first field of s that breaks the rules (docs/api.md "Site"), and
// writes the roots in their one form (no trailing "/", each once).
func (s *Settings) check(reserved []string) error {
	bad := func(field, reason string) error { return &account.FieldError{Field: field, Reason: reason} }
	if s.Handle != nil {
		switch h := *s.Handle; {
		case !handlePattern.MatchString(h):
			return bad("handle", "must be 2 to 40 characters of a-z, 0-9 and -, starting with a letter or digit")
		case slices.Contains(reserved, h):
			return bad("handle", "is reserved")
		}
	}
	if len(s.Roots) > MaxRoots {
		return bad("roots", fmt.Sprintf("must be at most %d folders", MaxRoots))
	}
	roots := make([]string, 0, len(s.Roots))
	for _, r := range s.Roots {
		r = strings.TrimSuffix(r, "/")
		if err := note.CheckFolder(r); err != nil {
			return bad("roots", "must be vault folders: "+strings.TrimPrefix(err.Error(), note.ErrInvalidText.Error()+": "))
		}
		if !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	s.Roots = roots
	if s.Home != nil {
		if err := note.CheckPath(*s.Home); err != nil {
			return bad("home", "must be the path of a note: "+strings.TrimPrefix(err.Error(), note.ErrInvalidText.Error()+": "))
		}
		if !s.underRoots(*s.Home) {
			return bad("home", "must be in one of the roots")
		}
	}
	if s.Title != nil {
		if n := utf8.RuneCountInString(*s.Title); n < 1 || n > 100 || strings.TrimSpace(*s.Title) == "" || strings.ContainsFunc(*s.Title, unicode.IsControl) {
			return bad("title", "must be 1 to 100 characters, not blank, without control characters")
		}
	}
	if s.Enabled && (s.Handle == nil || len(s.Roots) == 0) {
		return bad("enabled", "needs a handle and at least one root")
	}
	return nil
}

// Member is what the rule of membership reads of a publication that is not unpublished,
// and what names it to its owner.
type Member struct {
	CUID      string
	Title     *string
	Path      *string
	ExpiresAt *time.Time
	// Excluded: its properties keep it out of every site (Excluded).
	Excluded bool
}

// Excluded reports whether a note's properties keep it out of every site: they say
// `site: false` (a boolean; the string "false" is not).
func Excluded(properties map[string]any) bool {
	v, ok := properties["site"].(bool)
	return ok && !v
}

// Contains reports whether the note m is in the site at now: the site is enabled, the
// note is active, it has a path under one of the roots, and its properties do not say
// `site: false`.
func (s Settings) Contains(m Member, now time.Time) bool {
	if !s.Enabled || m.Path == nil || m.ExpiresAt != nil && !now.Before(*m.ExpiresAt) {
		return false
	}
	return !m.Excluded && s.underRoots(*m.Path)
}

// underRoots reports whether the vault path p lies under one of the roots, by match key
// (Obsidian's paths compare in any case and normal form).
func (s Settings) underRoots(p string) bool {
	key := note.MatchKey(p)
	for _, r := range s.Roots {
		if r == "" || strings.HasPrefix(key, note.MatchKey(r)+"/") {
			return true
		}
	}
	return false
}
