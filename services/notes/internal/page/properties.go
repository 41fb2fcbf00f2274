package page

import (
	"slices"
	"strings"
	"unicode"
)

// housekeeping are the properties the table leaves out: the title, which the page shows
// as its heading, and the keys by which Obsidian (and Obsidian Publish) are told how to
// treat the note rather than what it says. cssclasses become classes of the note's body
// (NoteClasses) and description its description (note.Text.Description).
var housekeeping = map[string]bool{
	"title": true, "publish": true, "permalink": true, "aliases": true, "alias": true,
	"cssclasses": true, "cssclass": true, "description": true,
}

// shown reports whether the top-level property key has a row in the table.
func shown(key string) bool { return !housekeeping[key] }

// The bounds of a note's classes: Obsidian notes use one or two.
const (
	maxClasses     = 16
	maxClassLength = 64 // of a name, before its prefix
)

// ClassPrefix starts every class that a note's cssclasses give its body, so that a note
// cannot take the page's own classes.
const ClassPrefix = "cssclass-"

// NoteClasses is the class attribute of the note's body for its properties: each name of
// cssclasses and cssclass (a list, or a string of names separated by commas or white
// space) as ClassPrefix and the name made a safe token (ASCII letters, digits, "-" and
// "_"; any run of other characters is one "-"), each once, at most maxClasses of them,
// each cut at maxClassLength. It is "" when the note has none.
func NoteClasses(props map[string]any) string {
	var out []string
	for _, key := range []string{"cssclasses", "cssclass"} {
		var names []any
		switch v := props[key].(type) {
		case string:
			names = []any{v}
		case []any:
			names = v
		}
		for _, e := range names {
			s, _ := e.(string)
			for _, name := range strings.FieldsFunc(s, classSeparator) {
				if len(out) == maxClasses {
					return strings.Join(out, " ")
				}
				if token := classToken(name); token != "" && !slices.Contains(out, ClassPrefix+token) {
					out = append(out, ClassPrefix+token)
				}
			}
		}
	}
	return strings.Join(out, " ")
}

func classSeparator(r rune) bool { return r == ',' || unicode.IsSpace(r) }

// classToken is name as a token of ASCII letters, digits, "-" and "_", at most
// maxClassLength bytes, without a "-" at either end.
func classToken(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		if b.Len() > maxClassLength {
			break
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
	}
	token := b.String()
	return strings.Trim(token[:min(len(token), maxClassLength)], "-")
}
