package note

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sharenote/sharenote/libs/yamljson"
)

// maxReasonBytes bounds the human reason of a properties error, because parser messages can
// quote the client's text and the reason is echoed in the API's error body.
const maxReasonBytes = 200

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
	if yamljson.IsNull(root) {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, invalidProperties(fmt.Sprintf("frontmatter line %d: the frontmatter must be a mapping of keys to values, not %s",
			root.Line+lineOffset, yamljson.Describe(root)))
	}
	props, err := yamljson.Value(root, MaxPropertiesDepth)
	var refused *yamljson.Error
	if errors.As(err, &refused) {
		return nil, invalidProperties(fmt.Sprintf("frontmatter line %d: %s", refused.Line+lineOffset, refused.Reason))
	}
	if err != nil {
		return nil, err
	}
	return props.(map[string]any), nil
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
	return fmt.Errorf("%w: %s", ErrInvalidProperties, yamljson.Truncate(reason, maxReasonBytes))
}
