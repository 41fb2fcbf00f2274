// Package docs_test checks the documentation: README.md and docs/*.md link only to files of
// this repository that exist, and to headings those files have; and the Go code cites only
// documents and sections that exist.
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
	// continued joins a comment's lines, so that a citation broken over two lines is one;
	// citation is a document of docs/, optionally with a section: docs/api.md "Publish".
	continued = regexp.MustCompile(`\s*\n\s*//\s*`)
	citation  = regexp.MustCompile(`docs/([a-z0-9-]+\.md)(?: "([^"\n]+)")?`)
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
		s := slug(m[1])
		a := s
		for i := 1; out[a]; i++ {
			a = s + "-" + strconv.Itoa(i)
		}
		out[a] = true
	}
	return out
}

// slug is the anchor GitHub gives a heading's text (before numbering repeats).
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestCitationsInTheCodeExist fails on a Go file that cites a document of docs/ that does
// not exist, or a section (docs/api.md "Publish") that the document has no heading for.
func TestCitationsInTheCodeExist(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, dir := range []string{"libs", "services", "charts"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			for _, m := range citation.FindAllStringSubmatch(continued.ReplaceAllString(string(b), " "), -1) {
				checked++
				doc := filepath.Join(root, "docs", m[1])
				if _, err := os.Stat(doc); err != nil {
					t.Errorf("%s cites docs/%s, which does not exist", rel, m[1])
					continue
				}
				if m[2] != "" && !anchors(t, doc)[slug(m[2])] {
					t.Errorf("%s cites docs/%s %q, which has no such heading", rel, m[1], m[2])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked == 0 {
		t.Fatal("found no citations at all: the citation pattern is broken")
	}
}
