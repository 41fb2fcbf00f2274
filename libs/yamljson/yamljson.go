// Package yamljson is the one conversion of YAML into the values JSON holds, for the
// properties of notes (the frontmatter authors write, untrusted) and for the OpenAPI
// document. It walks a parsed yaml.Node tree and refuses what JSON cannot hold or what
// would let a small document grow large: aliases, merge keys, keys that are not text,
// duplicate keys, NaN and infinite numbers, and nesting deeper than a bound.
package yamljson

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The YAML tags, in the short form yaml.Node.ShortTag reports, that the conversion treats
// specially.
const (
	strTag       = "!!str"
	intTag       = "!!int"
	floatTag     = "!!float"
	boolTag      = "!!bool"
	nullTag      = "!!null"
	timestampTag = "!!timestamp"
	binaryTag    = "!!binary"
	mergeTag     = "!!merge"
)

// Error is a value the conversion refuses, at a line of the YAML source.
type Error struct {
	Line   int
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// IsNull reports whether n is YAML's null.
func IsNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag }

// Value converts n into JSON-compatible Go values: map[string]any, []any, string, bool,
// int64 (integers that fit), float64 (other numbers) and nil. Timestamps keep the text of
// the source, because a date such as 2024-01-02 means a day to its author, not an instant
// in some time zone; binary data stays base64 text. Mappings and sequences may nest
// maxDepth levels (n itself is level 1); a refused value is an *Error.
func Value(n *yaml.Node, maxDepth int) (any, error) { return value(n, 0, maxDepth) }

func value(n *yaml.Node, depth, maxDepth int) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		return mapping(n, depth+1, maxDepth)
	case yaml.SequenceNode:
		return sequence(n, depth+1, maxDepth)
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.AliasNode:
		return nil, errorf(n, "aliases (*name) are not supported")
	default:
		return nil, errorf(n, "unexpected YAML node")
	}
}

func mapping(n *yaml.Node, depth, maxDepth int) (map[string]any, error) {
	if depth > maxDepth {
		return nil, errorf(n, "values nest deeper than %d levels", maxDepth)
	}
	m := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key, err := key(k)
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, errorf(k, "the key %s appears more than once", Quote(key))
		}
		val, err := value(v, depth, maxDepth)
		if err != nil {
			return nil, err
		}
		m[key] = val
	}
	return m, nil
}

func sequence(n *yaml.Node, depth, maxDepth int) ([]any, error) {
	if depth > maxDepth {
		return nil, errorf(n, "values nest deeper than %d levels", maxDepth)
	}
	s := make([]any, 0, len(n.Content))
	for _, item := range n.Content {
		v, err := value(item, depth, maxDepth)
		if err != nil {
			return nil, err
		}
		s = append(s, v)
	}
	return s, nil
}

// key returns the text of a scalar key as written, so that `1: a` and `true: b` become the
// JSON keys "1" and "true"; a JSON object has no other kind of key.
func key(n *yaml.Node) (string, error) {
	switch {
	case n.Kind == yaml.AliasNode:
		return "", errorf(n, "aliases (*name) are not supported")
	case n.Kind != yaml.ScalarNode:
		return "", errorf(n, "a key must be text, not %s", Describe(n))
	case n.ShortTag() == mergeTag:
		return "", errorf(n, "merge keys (<<) are not supported")
	}
	return n.Value, nil
}

func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case strTag, timestampTag, binaryTag:
		return n.Value, nil
	case mergeTag:
		return nil, errorf(n, "merge keys (<<) are not supported")
	case nullTag, boolTag, intTag, floatTag:
		// The yaml package's own resolution keeps YAML's number and boolean syntax exact
		// (0x1f, 1_000, .5, explicit tags) instead of a second, subtly different parser here.
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, errorf(n, "the value is not a valid %s", strings.TrimPrefix(n.ShortTag(), "!!"))
		}
		return number(n, v)
	default:
		// Application tags such as !thing carry no meaning here; the text is the value.
		return n.Value, nil
	}
}

// number normalises a decoded scalar to one numeric representation: int64 for integers
// that fit, float64 otherwise.
func number(n *yaml.Node, v any) (any, error) {
	switch v := v.(type) {
	case nil, bool:
		return v, nil
	case int:
		return int64(v), nil
	case int64:
		return v, nil
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), nil
		}
		return float64(v), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errorf(n, "NaN and infinite numbers cannot be stored")
		}
		return v, nil
	default:
		return nil, errorf(n, "unsupported value")
	}
}

func errorf(n *yaml.Node, format string, args ...any) error {
	return &Error{Line: n.Line, Reason: fmt.Sprintf(format, args...)}
}

// Describe names the kind of n for a message ("a list", "a mapping", …).
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	default:
		return "a single value"
	}
}

// Quote quotes a client-chosen string for an error message, shortened so that a huge key
// cannot make a huge error body.
func Quote(s string) string {
	const maxQuoted = 40
	if len(s) > maxQuoted {
		return strconv.Quote(Truncate(s, maxQuoted)) + "…"
	}
	return strconv.Quote(s)
}

// Truncate shortens s to at most n bytes without splitting a UTF-8 sequence.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
