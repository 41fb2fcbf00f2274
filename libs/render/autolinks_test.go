package render

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// autolinks must find exactly the links goldmark's Linkify finds: the same HTML for
// text made of URLs, email addresses, near misses and the characters Linkify triggers
// on, in every order, and for the Obsidian fixture.
func TestAutolinksAreGoldmarks(t *testing.T) {
	theirs := goldmark.New(goldmark.WithExtensions(extension.Linkify))
	ours := goldmark.New(goldmark.WithExtensions(autolinks{}))
	pieces := []string{
		"http://example.com", "https://example.com/a_b?c=(d)", "ftp://files.example", "www.example.com/x.",
		"HTTP://EXAMPLE.COM", "Www.example.com", "http:", "https", "hxxp://no", "wwww.example.com",
		"a@example.com", "first.last+tag@sub.example.org", strings.Repeat("a", 63) + "@example.com",
		strings.Repeat("b", 64) + "@example.com", strings.Repeat("c", 65) + "@example.com", "@example.com",
		"x@y", "mail@host.", "user@-host.com", "(", ")", "*", "_", "~", " ", "  ", "\t", "\n", "\n\n",
		"word", "**bold**", "_em_", "~~gone~~", "[a link](http://example.com)", "<https://example.com>",
		"`http://code.example`", ".", ",", "!", "?", "&amp;", "h", "f", "w", "@",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	fixture, err := os.ReadFile(filepath.Join("testdata", "obsidian.md"))
	if err != nil {
		t.Fatal(err)
	}
	sources := [][]byte{fixture}
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		sources = append(sources, []byte(b.String()))
	}
	for _, src := range sources {
		var want, got bytes.Buffer
		if err := theirs.Convert(src, &want); err != nil {
			t.Fatal(err)
		}
		if err := ours.Convert(src, &got); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("%q:\nautolinks %q\nLinkify   %q", src, got.String(), want.String())
		}
	}
}
