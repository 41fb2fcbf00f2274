package note

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// maxReasonBytes bounds the human reason of a properties error, because parser messages can
// quote the client's text and the reason is echoed in the API's error body.
const maxReasonBytes = 200

// The YAML tags, in the short form yaml.Node.ShortTag reports, that the conversion treats
// specially.
const (
	yamlStrTag       = "!!str"
	yamlIntTag       = "!!int"
	yamlFloatTag     = "!!float"
	yamlBoolTag      = "!!bool"
	yamlNullTag      = "!!null"
	yamlTimestampTag = "!!timestamp"
	yamlBinaryTag    = "!!binary"
	yamlMergeTag     = "!!merge"
)

// MaxFrontmatterBytes bounds the YAML parsed from one note. YAML parsing runs at a few
// MB/s and pathological documents are slower still, so this bound keeps one request from
// costing seconds of CPU; real frontmatter is a few hundred bytes.
const MaxFrontmatterBytes = 256 << 10

// SplitFrontmatter separates a note's leading YAML frontmatter from its Markdown body, because
// the service stores the frontmatter as the publication's properties (a JSON object) and only
// the rest as content.
//
// Frontmatter is present only when the first line is exactly "---" (after an optional UTF-8
// byte order mark, with an optional trailing carriage return) and a later line is exactly
// "---" or "..."; without such a closing line the note has no frontmatter and content comes
// back unchanged with nil properties, since a lone "---" is an ordinary Markdown rule. The
// closing line and its line break are removed; body is always a suffix of content, so a large
// note is never copied.
//
// An empty (or null) block yields nil properties and the stripped body. YAML that does not
// parse or is not a mapping fails with an error wrapping ErrInvalidProperties (and an empty
// body, since the note is refused). Values become
// JSON-compatible Go values: map[string]any, []any, string, bool, int64 (integers that fit),
// float64 (other numbers) and nil. Timestamps keep the text written in the source, because a
// date such as 2024-01-02 means a day to the author, not an instant in some time zone.
// Aliases, merge keys, nesting deeper than MaxPropertiesDepth levels, duplicate keys,
// non-scalar keys and NaN or infinite numbers are rejected, so untrusted YAML can neither
// blow up in memory nor produce a value JSON cannot hold.
func SplitFrontmatter(content string) (props map[string]any, body string, err error) {
	start := 0
	if strings.HasPrefix(content, "\ufeff") {
		start = len("\ufeff")
	}
	open, yamlStart, ok := nextLine(content, start)
	if !ok || strings.TrimSuffix(open, "\r") != "---" {
		return nil, content, nil
	}

	for pos := yamlStart; pos < len(content); {
		line, next, _ := nextLine(content, pos)
		if l := strings.TrimSuffix(line, "\r"); l == "---" || l == "..." {
			if pos-yamlStart > MaxFrontmatterBytes {
				return nil, "", fmt.Errorf("%w: the frontmatter is larger than %d bytes", ErrInvalidProperties, MaxFrontmatterBytes)
			}
			props, err := parseProperties(content[yamlStart:pos])
			if err != nil {
				return nil, "", err
			}
			return props, content[next:], nil
		}
		pos = next
	}
	return nil, content, nil
}

// nextLine returns the line of s starting at start without its "\n", the index just after
// that line break, and whether a line break ended the line (false for the last line).
func nextLine(s string, start int) (line string, next int, newline bool) {
	i := strings.IndexByte(s[start:], '\n')
	if i < 0 {
		return s[start:], len(s), false
	}
	return s[start : start+i], start + i + 1, true
}

// parseProperties converts the YAML between the frontmatter delimiters. Line numbers in its
// errors count from the top of the note, which is one line above the YAML.
func parseProperties(src string) (map[string]any, error) {
	const lineOffset = 1

	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, invalidProperties(yamlReason(err.Error(), lineOffset))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == yamlNullTag {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, invalidProperties(fmt.Sprintf("frontmatter line %d: the frontmatter must be a mapping of keys to values, not %s",
			root.Line+lineOffset, describeNode(root)))
	}
	c := converter{lineOffset: lineOffset}
	props, err := c.mapping(root, 1)
	if err != nil {
		return nil, err
	}
	return props, nil
}

// converter turns a yaml.Node tree into JSON-compatible values.
type converter struct {
	lineOffset int
}

func (c converter) value(n *yaml.Node, depth int) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		return c.mapping(n, depth+1)
	case yaml.SequenceNode:
		return c.sequence(n, depth+1)
	case yaml.ScalarNode:
		return c.scalar(n)
	case yaml.AliasNode:
		return nil, c.errorf(n, "aliases (*name) are not supported")
	default:
		return nil, c.errorf(n, "unexpected YAML node")
	}
}

func (c converter) mapping(n *yaml.Node, depth int) (map[string]any, error) {
	if depth > MaxPropertiesDepth {
		return nil, c.errorf(n, "properties nest deeper than %d levels", MaxPropertiesDepth)
	}
	m := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key, err := c.key(k)
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, c.errorf(k, "the key %s appears more than once", quoteForReason(key))
		}
		val, err := c.value(v, depth)
		if err != nil {
			return nil, err
		}
		m[key] = val
	}
	return m, nil
}

func (c converter) sequence(n *yaml.Node, depth int) ([]any, error) {
	if depth > MaxPropertiesDepth {
		return nil, c.errorf(n, "properties nest deeper than %d levels", MaxPropertiesDepth)
	}
	s := make([]any, 0, len(n.Content))
	for _, item := range n.Content {
		v, err := c.value(item, depth)
		if err != nil {
			return nil, err
		}
		s = append(s, v)
	}
	return s, nil
}

// key returns the text of a scalar key as written, so that `1: a` and `true: b` become the
// JSON keys "1" and "true"; a JSON object has no other kind of key.
func (c converter) key(n *yaml.Node) (string, error) {
	switch {
	case n.Kind == yaml.AliasNode:
		return "", c.errorf(n, "aliases (*name) are not supported")
	case n.Kind != yaml.ScalarNode:
		return "", c.errorf(n, "a key must be text, not %s", describeNode(n))
	case n.ShortTag() == yamlMergeTag:
		return "", c.errorf(n, "merge keys (<<) are not supported")
	}
	return n.Value, nil
}

func (c converter) scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case yamlStrTag, yamlTimestampTag, yamlBinaryTag:
		// Timestamps keep their source text (see SplitFrontmatter); binary data stays base64
		// text because JSON strings must be valid UTF-8.
		return n.Value, nil
	case yamlMergeTag:
		return nil, c.errorf(n, "merge keys (<<) are not supported")
	case yamlNullTag, yamlBoolTag, yamlIntTag, yamlFloatTag:
		// The yaml package's own resolution keeps YAML's number and boolean syntax exact
		// (0x1f, 1_000, .5, explicit tags) instead of a second, subtly different parser here.
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, c.errorf(n, "the value is not a valid %s", strings.TrimPrefix(n.ShortTag(), "!!"))
		}
		return c.number(n, v)
	default:
		// Application tags such as !thing carry no meaning here; the text is the value.
		return n.Value, nil
	}
}

// number normalises a decoded scalar to the one numeric representation properties use:
// int64 for integers that fit, float64 otherwise.
func (c converter) number(n *yaml.Node, v any) (any, error) {
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
			return nil, c.errorf(n, "NaN and infinite numbers cannot be stored")
		}
		return v, nil
	default:
		return nil, c.errorf(n, "unsupported value")
	}
}

func (c converter) errorf(n *yaml.Node, format string, args ...any) error {
	return invalidProperties(fmt.Sprintf("frontmatter line %d: ", n.Line+c.lineOffset) + fmt.Sprintf(format, args...))
}

func describeNode(n *yaml.Node) string {
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

// yamlReason rewrites a yaml package error ("yaml: line 3: ...") so that its line number
// counts from the top of the note the author is looking at.
func yamlReason(msg string, lineOffset int) string {
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ":"); ok {
			if line, err := strconv.Atoi(num); err == nil {
				return fmt.Sprintf("frontmatter line %d:%s", line+lineOffset, tail)
			}
		}
	}
	return "frontmatter: " + msg
}

func invalidProperties(reason string) error {
	return fmt.Errorf("%w: %s", ErrInvalidProperties, truncateUTF8(reason, maxReasonBytes))
}

// quoteForReason quotes a client-chosen string for an error message, shortened so that a
// huge key cannot make a huge error body.
func quoteForReason(s string) string {
	const maxQuoted = 40
	if len(s) > maxQuoted {
		return strconv.Quote(truncateUTF8(s, maxQuoted)) + "…"
	}
	return strconv.Quote(s)
}

// truncateUTF8 shortens s to at most n bytes without splitting a UTF-8 sequence.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
