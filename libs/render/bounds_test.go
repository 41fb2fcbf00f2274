package render

import (
	"context"
	"strings"
	"testing"
)

func TestBoundsLeaveEverydayMarkdownAlone(t *testing.T) {
	sentence := "A *word*, a **strong** one, ==marked== and ~~struck~~, key=value x_y 2*3, a [link](https://example.com/a/b?c=d) " +
		"and [[Wiki link]], ![image](i.png \"title\"), a footnote[^1] and $x^2$.\n"
	tests := []struct{ name, src string }{
		{"a paragraph of 200 KiB", strings.Repeat(sentence, 200<<10/len(sentence))},
		{"a thousand reference definitions", "[a]\n\n" + strings.Repeat("[a]: https://example.com/a/long/path\n", 1000)},
		{"lists nested ten deep", func() string {
			var b strings.Builder
			for i := range 10 {
				b.WriteString(strings.Repeat("  ", i) + "- item\n")
			}
			return b.String()
		}()},
		{"block quotes nested twenty deep", strings.Repeat("> ", 20) + "a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := render(context.Background(), tt.src+"\n[^1]: note\n", nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Fallbacks {
				if f.Reason == reasonWork || f.Reason == reasonNesting {
					t.Errorf("fallback %+v", f)
				}
			}
		})
	}
}

func TestConstructsOverTheBoundsAreTextAndReported(t *testing.T) {
	tests := []struct{ name, src, reason, html string }{
		{"mismatched emphasis", strings.Repeat("*a_", 20000), reasonWork, "*a_*a_"},
		{"unclosed link destinations", strings.Repeat("[a](b", 20000), reasonWork, "[a](b[a](b"},
		{"nested block quotes", strings.Repeat(">", 100) + " a\n", reasonNesting, "&gt;&gt;&gt;"},
		{"lists nested by indentation", func() string {
			var b strings.Builder
			for i := range 40 {
				b.WriteString(strings.Repeat("  ", i) + "- item\n")
			}
			return b.String()
		}(), reasonNesting, "- item"},
		{"ordered lists nested on a line", strings.Repeat("1. ", 100) + "a\n", reasonNesting, "1. 1. 1."},
		{"link reference definitions", strings.Repeat("[a]: b\n", 5000), reasonWork, "[a]: b\n[a]: b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := render(context.Background(), tt.src, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Fallbacks) != 1 || res.Fallbacks[0].Reason != tt.reason {
				t.Errorf("fallbacks %+v, want one for %q", res.Fallbacks, tt.reason)
			}
			if !strings.Contains(string(res.HTML), tt.html) {
				t.Errorf("html %.200q…, want %q in it", res.HTML, tt.html)
			}
		})
	}
}

func TestEveryContainerNestedDeepRenders(t *testing.T) {
	markers := []string{"> ", "- ", "1. ", "* ", "+ ", "1) ", "[^a]: ", "- [ ] ", "> [!note] "}
	for _, a := range markers {
		for _, b := range markers {
			prefix := strings.Repeat(a+b, 25)
			var indented strings.Builder
			for i := range 40 {
				indented.WriteString(strings.Repeat("  ", i) + a + b + "a\n")
			}
			for _, src := range []string{
				prefix + "a\n" + prefix + "b\nlazy\n\n" + prefix + "- c\n",
				indented.String(),
			} {
				if _, err := render(context.Background(), src, nil); err != nil {
					t.Errorf("%q then %q: %v", a, b, err)
				}
			}
		}
	}
}
