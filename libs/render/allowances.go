package render

import (
	"strings"

	"golang.org/x/net/html"
)

// Allowances are what a page's Content-Security-Policy must allow for the note HTML it
// shows (a render, with its links resolved and its embeds in place).
type Allowances struct {
	// Styles are the distinct values of its style attributes, as a browser reads them,
	// in document order: what the sanitizer kept of a note's style attributes.
	Styles []string
	// Players: it has a player, whose frame comes from one of PlayerOrigins.
	Players bool
}

// AllowancesOf reads the allowances of note HTML. Text cannot pass for markup in it (the
// sanitizer escaped it), so an HTML without "style=" or "<iframe" is not even parsed.
func AllowancesOf(body string) Allowances {
	var a Allowances
	if !strings.Contains(body, " style=") && !strings.Contains(body, "<iframe") {
		return a
	}
	seen := map[string]bool{}
	z := html.NewTokenizer(strings.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return a
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			for _, attr := range tok.Attr {
				switch {
				case attr.Key == "style" && !seen[attr.Val]:
					seen[attr.Val] = true
					a.Styles = append(a.Styles, attr.Val)
				case tok.Data == "iframe" && attr.Key == "class" && attr.Val == "player":
					a.Players = true
				}
			}
		}
	}
}
