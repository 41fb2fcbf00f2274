package page

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/sharenote/sharenote/libs/render"
)

// maxStyleHashes caps the hashes of style attributes a page's policy lists, so that the
// header stays within what proxies accept (about 55 bytes each).
const maxStyleHashes = 32

// noteAllowances is what a page's policy adds to policyFor for the note HTML it shows
// (render.AllowancesOf), on the pages that need it and only there:
//
//   - For style attributes, which the sanitizer has limited to colours, alignment,
//     weight, style and decoration, without url(): style-src-attr 'unsafe-hashes' with
//     the sha256 of each distinct value, so that those apply and no others; over
//     maxStyleHashes of them, style-src-attr 'unsafe-inline'. A browser without CSP3's
//     style-src-attr applies none, and shows the text unstyled. A page whose policy
//     allows inline styles already (inlineStyles: a page with diagrams) gets none: it
//     would block the style attributes Mermaid sets.
//   - For a player: frame-src of the players' two origins (render.PlayerOrigins).
func noteAllowances(body string, inlineStyles bool) string {
	a := render.AllowancesOf(body)
	var b strings.Builder
	switch {
	case inlineStyles:
	case len(a.Styles) > maxStyleHashes:
		b.WriteString("; style-src-attr 'unsafe-inline'")
	case len(a.Styles) > 0:
		b.WriteString("; style-src-attr 'unsafe-hashes'")
		for _, s := range a.Styles {
			sum := sha256.Sum256([]byte(s))
			b.WriteString(" 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'")
		}
	}
	if a.Players {
		b.WriteString("; frame-src " + strings.Join(render.PlayerOrigins, " "))
	}
	return b.String()
}
