package note

import (
	"fmt"
	"strings"
)

// MaxPropertiesDepth bounds how deeply a note's properties may nest, counting the
// properties object itself as level 1: {"a": {"b": 1}} is two levels deep, and so is
// {"a": [1]}. Real notes use two or three levels. The bound applies alike to YAML
// frontmatter and to the JSON properties of a request, so that neither a parser's
// recursion nor the stored JSON can be made arbitrarily deep by a client.
const MaxPropertiesDepth = 32

// CheckBodyDepth fails with an error wrapping ErrInvalidProperties when the JSON body of
// a publish or an update, an object whose only member that nests is its properties, nests
// them deeper than MaxPropertiesDepth levels (the body one level more). It counts brackets
// outside strings in one pass over the bytes, so it runs before decoding: a document
// 10,000 levels deep is refused without building its 10,000 nested values. Text that is
// not JSON may pass; decoding it then fails.
func CheckBodyDepth(body []byte) error { return checkDepth(body, MaxPropertiesDepth+1) }

func checkDepth(raw []byte, limit int) error {
	depth := 0
	inString, escaped := false, false
	for _, b := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > limit {
				return fmt.Errorf("%w: properties nest deeper than %d levels", ErrInvalidProperties, MaxPropertiesDepth)
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return nil
}

// Description is the note's description for its page and its preview: its summary, else
// its Obsidian property "description" when that is text (docs/api.md "The note page").
// It is "" for neither.
func (t Text) Description() string {
	if t.Summary != nil && strings.TrimSpace(*t.Summary) != "" {
		return *t.Summary
	}
	d, _ := t.Properties["description"].(string)
	return strings.TrimSpace(d)
}
