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
		{"sizes and anchors are not part of the name", "![[a.png|300]] ![[a.png#x|30x20]] [[a.png#x]]",
			"![a.png|300](" + u + "a.png) ![a.png|30x20](" + u + "a.png) " + u + "a.png"},
		{"an alias is the text of the link and the alt text of the embed", "[[a.png|see [it]]] ![[a.png|a plot]]",
			"[see \\[it](" + u + "a.png)] ![a plot](" + u + "a.png)"},
		{"code, math and comments are data", "`[[a.png]]` $[[a.png]]$ %%![[a.png]]%%\n\n```\n![[a.png]]\n```\n\n    [[a.png]]\n",
			"`[[a.png]]` $[[a.png]]$ %%![[a.png]]%%\n\n```\n![[a.png]]\n```\n\n    [[a.png]]\n"},
		{"a Markdown destination naming an image", "![alt]([[a.png]]) [t]([[b.jpg]]) ![x](my%20photo.webp) ![y](https://e.com/a.png)",
			"![alt](" + u + "a.png) [t](" + u + "b.jpg) ![x](" + u + "my%20photo.webp) ![y](https://e.com/a.png)"},
		{"a table's escaped pipe", "| a |\n|---|\n| ![[a.png\\|300]] |\n", "| a |\n|---|\n| ![a.png|300](" + u + "a.png) |\n"},
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

// Content full of unclosed "[[" must not make the scan quadratic. (A paragraph of them
// is over the renderer's parse bounds, so it is text on the page, and here.)
func TestReplaceImageLinksPathologicalInputIsLinear(t *testing.T) {
	urls := map[string]string{"a.png": "U"}
	content := strings.Repeat("[[", 500_000) + "a.png]]\n\n[[a.png]]"
	got := note.ReplaceImageLinks(content, urls)
	if want := strings.Repeat("[[", 500_000) + "a.png]]\n\nU"; got != want {
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

// FuzzReplaceImageLinks checks the rules that hold whatever the Markdown: nothing changes
// without images, or when no reference can name the image, or inside code.
func FuzzReplaceImageLinks(f *testing.F) {
	f.Add("see ![[a.png]] and [[a.png]]", "a.png", "https://x/a.png")
	f.Add("[[[a.png]]]", "a.png", "u")
	f.Add("[[x[1].gif]]", "x[1].gif", "https://x/[[x[1].gif]]")
	f.Add("![[]]", "", "empty")
	f.Add("[[oops [[a.png]]", "a.png", "")
	f.Add("![alt]([[a.png]]) ![[a.png|300]]", "a.png", "u")
	f.Fuzz(func(t *testing.T, content, name, url string) {
		if got := note.ReplaceImageLinks(content, nil); got != content {
			t.Fatalf("with no images, ReplaceImageLinks(%q) = %q", content, got)
		}
		urls := map[string]string{name: url}
		got := note.ReplaceImageLinks(content, urls)
		if (name == "" || !strings.Contains(content, name)) && got != content {
			t.Fatalf("content %q without %q changed to %q", content, name, got)
		}
		fence := strings.Repeat("`", longestRun(content, '`')+3)
		code := fence + "\n" + content + "\n" + fence + "\n"
		if got := note.ReplaceImageLinks(code, urls); got != code {
			t.Fatalf("code %q changed to %q", code, got)
		}
	})
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := range len(s) {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
