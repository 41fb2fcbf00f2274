package note

// The names a publication answers to when another note of its author links to it, and the
// rules that pick the publication a link names (docs/api.md "Vaults and links").

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MaxPathBytes is the longest path a publication may have.
const MaxPathBytes = 1024

// NameKind says which of its names a link matched: the rules of resolution, in order.
type NameKind int

const (
	// NamePath is the publication's path (with .md).
	NamePath NameKind = 1
	// NameBase is its path's base name, without .md.
	NameBase NameKind = 2
	// NameAlias is one of its aliases (properties aliases or alias).
	NameAlias NameKind = 3
	// NameTitle is its title, for a publication without a path only.
	NameTitle NameKind = 4
)

// Name is one name of a publication as the link index stores it: its kind and match key.
type Name struct {
	Kind NameKind
	Key  string
}

// MatchKey is the form in which names compare: NFC, then Unicode case folding. It is
// computed here, not by a database, so that Postgres and SQLite agree.
func MatchKey(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return cases.Fold().String(norm.NFC.String(s))
		}
	}
	// ASCII is in NFC, and folds to lower case.
	return strings.ToLower(s)
}

// CheckPath reports why p cannot be a publication's path: it must be relative,
// "/"-separated and end in ".md", at most MaxPathBytes of UTF-8, with no empty, "." or
// ".." segment and no "\", control or bidi control character. Every failure wraps
// ErrInvalidText.
func CheckPath(p string) error {
	if !strings.HasSuffix(p, ".md") {
		return fmt.Errorf("%w: path must end in .md", ErrInvalidText)
	}
	return checkVaultPath("path", p)
}

// CheckFolder reports why p cannot be a vault folder: "" (the whole vault), or a path
// as CheckPath has them without the ".md" (and without a trailing "/"). Every failure
// wraps ErrInvalidText.
func CheckFolder(p string) error {
	if p == "" {
		return nil
	}
	return checkVaultPath("folder", p)
}

// checkVaultPath checks the rules a path and a folder share; what names the value in
// its errors.
func checkVaultPath(what, p string) error {
	bad := func(why string) error { return fmt.Errorf("%w: %s %s", ErrInvalidText, what, why) }
	switch {
	case len(p) > MaxPathBytes:
		return bad(fmt.Sprintf("is longer than %d bytes", MaxPathBytes))
	case !utf8.ValidString(p):
		return bad("is not valid UTF-8")
	case strings.HasPrefix(p, "/"):
		return bad("must be relative (no leading /)")
	case strings.ContainsRune(p, '\\'):
		return bad(`must use / between folders, not \`)
	case strings.IndexFunc(p, forbiddenInPath) >= 0:
		return bad("must not hold control or bidi control characters")
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return bad(`must not have an empty, "." or ".." segment`)
		}
	}
	return nil
}

// forbiddenInPath: C0 and C1 controls and the bidi controls, which can make a path read
// as another.
func forbiddenInPath(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == '\u061c', r == '\u200e', r == '\u200f', r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// baseName is the base name of a path without its .md.
func baseName(p string) string {
	return strings.TrimSuffix(path.Base(p), ".md")
}

// DisplayTitle is the title a reader sees: the title, else the base name of the path,
// else nil.
func (t Text) DisplayTitle() *string {
	if t.Title != nil || t.Path == nil {
		return t.Title
	}
	b := baseName(*t.Path)
	return &b
}

// Names are the names of a publication that links can match, each once: its path and
// base name, its aliases, and, without a path, its title.
func (t Text) Names() []Name {
	var out []Name
	add := func(kind NameKind, s string) {
		if n := (Name{kind, MatchKey(s)}); s != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if t.Path != nil {
		add(NamePath, *t.Path)
		add(NameBase, baseName(*t.Path))
	} else if t.Title != nil {
		add(NameTitle, *t.Title)
	}
	for _, a := range aliases(t.Properties) {
		add(NameAlias, a)
	}
	return out
}

// aliases are the aliases of Obsidian's properties: aliases (or alias), a list or one
// comma-separated string.
func aliases(props map[string]any) []string {
	var out []string
	for _, key := range []string{"aliases", "alias"} {
		switch v := props[key].(type) {
		case string:
			for a := range strings.SplitSeq(v, ",") {
				out = append(out, strings.TrimSpace(a))
			}
		case []any:
			for _, a := range v {
				if s, ok := a.(string); ok {
					out = append(out, strings.TrimSpace(s))
				}
			}
		}
	}
	return out
}

// NamesVersion identifies the rules by which Text.Names and MatchKey make a publication's
// names: the store indexes again, in the background, the publications whose names an older
// version made (Renders.IndexNames). 2: the index also holds each publication's link
// keys (Publication.LinkKeys).
const NamesVersion = 2

// PathTakenError is a publish or update with a path that another of the account's active
// or expired publications, Holder, has.
type PathTakenError struct {
	Path, Holder string
}

func (e *PathTakenError) Error() string {
	return "path " + e.Path + " is taken by publication " + e.Holder
}
