// Package docs_test checks the documentation: README.md and docs/*.md link only to files of
// this repository that exist, and to headings those files have.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	// fence is a fenced code block; code is an inline code span, which may span lines.
	// Links inside them are text, and rendering-bounds.md shows shapes such as
	// `[[[[a](b)` there.
	fence = regexp.MustCompile("(?ms)^```.*?^```")
	code  = regexp.MustCompile("`[^`]*`")
	// link is an inline Markdown link; its target ends at the first space or ")".
	link    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
	scheme  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// TestLinksResolveInsideTheRepository fails on a relative link whose file does not exist,
// that leaves the repository, or whose #fragment names no heading of a Markdown file.
func TestLinksResolveInsideTheRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	checked := 0
	for _, file := range files {
		rel, _ := filepath.Rel(root, file)
		for _, target := range links(t, file) {
			checked++
			if scheme.MatchString(target) {
				continue // a web address, not a file of the repository
			}
			path, fragment, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if r, err := filepath.Rel(root, dest); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
					t.Errorf("%s: %s leads outside the repository", rel, target)
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: %s: no such file", rel, target)
					continue
				}
			}
			if fragment != "" && strings.HasSuffix(dest, ".md") && !anchors(t, dest)[fragment] {
				t.Errorf("%s: %s: no heading with the anchor #%s", rel, target, fragment)
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no links at all: the link pattern is broken")
	}
}

// links returns the targets of the inline links of a Markdown file, outside code.
func links(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := code.ReplaceAllString(fence.ReplaceAllString(string(b), ""), "")
	var out []string
	for _, m := range link.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// anchors returns the anchors GitHub gives the headings of a Markdown file: lower case,
// spaces as "-", punctuation other than "-" and "_" dropped, "-1", "-2", … for repeats.
func anchors(t *testing.T, file string) map[string]bool {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
		var slug strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		a := slug.String()
		for i := 1; out[a]; i++ {
			a = slug.String() + "-" + strconv.Itoa(i)
		}
		out[a] = true
	}
	return out
}
