package note_test

import (
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
)

func TestReplaceImageLinks(t *testing.T) {
	const u = "https://share.example/api/images/u/n/"
	urls := map[string]string{
		"a.png":          u + "a.png",
		"b.jpg":          u + "b.jpg",
		"my photo.webp":  u + "my%20photo.webp",
		"x[1].gif":       u + "x%5B1%5D.gif",
		`back\slash.png`: u + "back%5Cslash.png",
		"evil.png":       "https://x/[[a.png]]",
		"":               "EMPTY",
	}
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"plain link becomes the URL", "see [[a.png]] here", "see " + u + "a.png here"},
		{"embed becomes a Markdown image", "![[a.png]]", "![a.png](" + u + "a.png)"},
		{"names with spaces match exactly", "![[my photo.webp]]", "![my photo.webp](" + u + "my%20photo.webp)"},
		{"unknown names stay as written", "![[c.png]] and [[notes]]", "![[c.png]] and [[notes]]"},
		{"matching is case-sensitive", "[[A.png]] ![[a.PNG]]", "[[A.png]] ![[a.PNG]]"},
		{"aliases and sizes are not the exact name", "![[a.png|300]] [[a.png#x]]", "![[a.png|300]] [[a.png#x]]"},
		{"adjacent references are all replaced", "[[a.png]][[b.jpg]]![[a.png]]", u + "a.png" + u + "b.jpg" + "![a.png](" + u + "a.png)"},
		{"an extra opening bracket stays before the link", "[[[a.png]]", "[" + u + "a.png"},
		{"an extra closing bracket stays after the link", "[[a.png]]]", u + "a.png]"},
		{"an unclosed reference before a real one is kept", "[[oops [[a.png]]", "[[oops " + u + "a.png"},
		{"a reference ends at the first closing brackets", "[[a.png]]b.jpg]]", u + "a.png" + "b.jpg]]"},
		{"names containing brackets match and are escaped in link text", "![[x[1].gif]] [[x[1].gif]]",
			`![x\[1\].gif](` + u + "x%5B1%5D.gif) " + u + "x%5B1%5D.gif"},
		{"backslashes in the name are escaped in link text", `![[back\slash.png]]`, `![back\\slash.png](` + u + "back%5Cslash.png)"},
		{"a URL containing [[ is not substituted again", "[[evil.png]] ![[evil.png]]", "https://x/[[a.png]] ![evil.png](https://x/[[a.png]])"},
		{"a bang far from the brackets is not an embed", "! [[a.png]]", "! " + u + "a.png"},
		{"double bang keeps one", "!![[a.png]]", "!![a.png](" + u + "a.png)"},
		{"no references leaves content unchanged", "plain text [link](x)", "plain text [link](x)"},
		{"an empty name is never a file", "[[]] ![[]]", "[[]] ![[]]"},
		{"multi-byte text around links survives", "é[[a.png]]ü", "é" + u + "a.png" + "ü"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := note.ReplaceImageLinks(tt.content, urls); got != tt.want {
				t.Errorf("ReplaceImageLinks(%q) = %q, want %q", tt.content, got, tt.want)
			}
		})
	}
}

func TestReplaceImageLinksWithoutImagesIsIdentity(t *testing.T) {
	content := "![[a.png]] [[b.png]]"
	for _, urls := range []map[string]string{nil, {}} {
		if got := note.ReplaceImageLinks(content, urls); got != content {
			t.Errorf("ReplaceImageLinks(%q, %v) = %q", content, urls, got)
		}
	}
}

// Content full of unclosed "[[" must not make the scan quadratic.
func TestReplaceImageLinksPathologicalInputIsLinear(t *testing.T) {
	urls := map[string]string{"a.png": "U"}
	content := strings.Repeat("[[", 1_000_000) + "a.png]]"
	got := note.ReplaceImageLinks(content, urls)
	if want := strings.Repeat("[[", 999_999) + "U"; got != want {
		t.Errorf("result has length %d, want %d", len(got), len(want))
	}
}

func BenchmarkReplaceImageLinksPathological(b *testing.B) {
	urls := map[string]string{"a.png": "U", strings.Repeat("n", 255): "V"}
	content := strings.Repeat("[[x", 600_000) + "]]"
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		note.ReplaceImageLinks(content, urls)
	}
}

func FuzzReplaceImageLinks(f *testing.F) {
	f.Add("see ![[a.png]] and [[a.png]]", "a.png", "https://x/a.png")
	f.Add("[[[a.png]]]", "a.png", "u")
	f.Add("[[x[1].gif]]", "x[1].gif", "https://x/[[x[1].gif]]")
	f.Add("![[]]", "", "empty")
	f.Add("[[oops [[a.png]]", "a.png", "")
	f.Fuzz(func(t *testing.T, content, name, url string) {
		if got := note.ReplaceImageLinks(content, nil); got != content {
			t.Fatalf("with no images, ReplaceImageLinks(%q) = %q", content, got)
		}
		urls := map[string]string{name: url}
		got := note.ReplaceImageLinks(content, urls)
		if want := replaceImageLinksReference(content, urls); got != want {
			t.Fatalf("ReplaceImageLinks(%q, %q) = %q, reference gives %q", content, urls, got, want)
		}
		if !strings.Contains(content, "[["+name+"]]") && got != content {
			t.Fatalf("content %q without [[%s]] changed to %q", content, name, got)
		}
	})
}

// replaceImageLinksReference is the obvious quadratic implementation of the rules, kept to
// check the linear one against.
func replaceImageLinksReference(content string, urls map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(content); {
		if strings.HasPrefix(content[i:], "[[") {
			if end := strings.Index(content[i+2:], "]]"); end >= 0 {
				name := content[i+2 : i+2+end]
				if url, ok := urls[name]; ok && name != "" {
					s := b.String()
					if strings.HasSuffix(s, "!") && i > 0 && content[i-1] == '!' {
						b.Reset()
						b.WriteString(s[:len(s)-1])
						r := strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`)
						b.WriteString("![" + r.Replace(name) + "](" + url + ")")
					} else {
						b.WriteString(url)
					}
					i += 2 + end + 2
					continue
				}
			}
		}
		b.WriteByte(content[i])
		i++
	}
	return b.String()
}
