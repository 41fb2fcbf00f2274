package render

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// autolinks is goldmark's Linkify (GFM's autolinks: bare URLs and email addresses),
// asked only where it can find a link. It triggers on every space of a note's text, and
// each call looks for a URL scheme and then scans the word for an email address: about a
// fifth of the parse of an everyday note. A link it finds starts, after the one trigger
// character it skips, with "http:", "https:", "ftp:" or "www." (its default schemes), or
// is an email address, whose "@" comes within the 64 bytes of its local part
// (util.FindEmailIndex). Elsewhere it finds nothing, and autolinks does not ask it.
// TestAutolinksAreGoldmarks holds the output to goldmark's own Linkify.
type autolinks struct{}

func (autolinks) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(quickLinkify{extension.NewLinkifyParser()}, 999)))
}

type quickLinkify struct{ parser.InlineParser }

// linkifyTriggers are the characters Linkify skips when triggered by them (its Trigger,
// which makes a new slice each call).
const linkifyTriggers = " *_~("

func (q quickLinkify) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if len(line) > 0 && strings.IndexByte(linkifyTriggers, line[0]) >= 0 {
		line = line[1:] // as Linkify: the character it was triggered by
	}
	if len(line) == 0 {
		return nil
	}
	switch line[0] {
	case 'h', 'f', 'w':
	default:
		if bytes.IndexByte(line[:min(len(line), 65)], '@') < 0 {
			return nil
		}
	}
	return q.InlineParser.Parse(parent, block, pc)
}
