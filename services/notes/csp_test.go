package notes_test

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// A page's policy allows the style attributes its note kept, by hash, and the players'
// frames, only on the pages that have them (docs/api.md "The note page").
func TestThePolicyAllowsKeptStylesAndPlayersOnlyWhereNeeded(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	csp := func(content string) (string, string) {
		t.Helper()
		resp, page := pageOf(t, f, f.publish(f.acc, note.Draft{Content: content}))
		resp.Expect(t, 200, "")
		return resp.Header.Get("Content-Security-Policy"), page
	}
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}

	plain, _ := csp(typical)
	styled, page := csp(`<span style="color:red">red</span>, <b style="color: red">again</b> and <i style="font-style:italic;position:fixed">it</i>` + "\n")
	played, _ := csp("![](https://youtu.be/dQw4w9WgXcQ)\n\n<iframe src=\"https://player.vimeo.com/video/76979871\"></iframe>\n")
	var many strings.Builder
	for i := range 40 {
		fmt.Fprintf(&many, "<span style=\"color:#%06x\">%d</span>\n", i, i)
	}
	crowded, _ := csp(many.String())
	drawn, _ := csp("<span style=\"color:red\">red</span>\n\n```mermaid\ngraph TD\n  A --> B\n```\n")

	for name, c := range map[string]string{"plain": plain, "styled": styled, "crowded": crowded} {
		if strings.Contains(c, "frame-src") {
			t.Errorf("%s page without a player allows frames: %s", name, c)
		}
	}
	if strings.Contains(plain, "style-src-attr") || strings.Contains(played, "style-src-attr") {
		t.Errorf("a page without style attributes allows some: %s / %s", plain, played)
	}
	if want := "; style-src-attr 'unsafe-hashes' " + hash("color: red") + " " + hash("font-style: italic"); !strings.HasSuffix(styled, want) {
		t.Errorf("styled page's CSP %s\nwant it to end in %s", styled, want)
	}
	if !strings.Contains(page, `<span style="color: red">red</span>, <b style="color: red">again</b> and <i style="font-style: italic">it</i>`) {
		t.Errorf("the kept styles are not the hashed ones:\n%s", page)
	}
	if !strings.HasSuffix(played, "; frame-src https://www.youtube-nocookie.com https://player.vimeo.com") {
		t.Errorf("a page with players: %s", played)
	}
	if !strings.HasSuffix(crowded, "; style-src-attr 'unsafe-inline'") || strings.Contains(crowded, "unsafe-hashes") {
		t.Errorf("a page of 40 distinct styles: %s", crowded)
	}
	// A page with a diagram allows inline styles already: a style-src-attr would block
	// the style attributes Mermaid sets.
	if strings.Contains(drawn, "style-src-attr") || !strings.Contains(drawn, "style-src 'unsafe-inline'") {
		t.Errorf("a page with a diagram and a style attribute: %s", drawn)
	}
	for _, c := range []string{plain, styled, played, crowded} {
		if !strings.HasPrefix(c, "default-src 'none'; style-src 'sha256-") || strings.Contains(c, "script-src") {
			t.Errorf("CSP %s", c)
		}
	}
}
