//go:build linux

package render

import (
	"testing"
	"time"
)

// The note's HTML is rendered, sanitized and balanced in time linear in its length:
// unclosed elements to balance, paragraphs that a block closes, inline elements that
// drop what follows them, styles to parse and players to generate.
func TestRawHTMLRendersInLinearTime(t *testing.T) {
	for _, unit := range []string{"<b>a", "</b>", "<p/>a", "<div>\n", "<td><table><p>", "a <script>b", "<textarea>\n\n",
		`<span style="color:red;text-align:center">a`, `<iframe src="https://youtu.be/dQw4w9WgXcQ">`,
		"![](https://youtu.be/dQw4w9WgXcQ)", "![](https://x.com/a)"} {
		if err := linearity(t, unit, 4<<10, 64<<10, 5, 20*time.Millisecond); err != nil {
			t.Errorf("%q: %v", unit, err)
		}
	}
}
