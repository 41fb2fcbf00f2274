package render

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// wikilinks is the goldmark extension for Obsidian's links between notes: `[[target]]`,
// `[[target|shown]]`, `[[target#fragment]]`, `[[#fragment]]` and the embed `![[target]]`,
// on one line; in a table `[[target\|shown]]`, whose "\" escapes the pipe from the table,
// is the same link. Markdown links to a note, `[text](Folder/Note%20name.md#Heading)`,
// become note links too (see noteLinks).
//
// A link to another note is written as placeholders (see ResolveLinks) and leads where
// the page's builder resolves it; a link within the note (empty target) is resolved here,
// to the anchor its fragment names (Outline.Anchor). A link that leads nowhere, and a
// link or embed naming a file other than a note (see IsAttachment), shows its text as
// plain text. The text is what Obsidian shows: the shown part, else the target and each
// part of the fragment joined by " > " ("Note > Heading", "Heading" for `[[#Heading]]`).
// Image references that the note's own images resolve were rewritten into Markdown
// images before the render (libs/note), so those left here name no image of the note.
type wikilinks struct{}

var kindWikiLink = ast.NewNodeKind("WikiLink")

type wikiLinkNode struct {
	ast.BaseInline
	Link
	Shown string // what the page shows of a wikilink
	// Markdown: a Markdown link, whose children are what the page shows.
	Markdown bool
	// Anchor is where a link within the note leads ("" for nowhere): see noteLinks.
	Anchor string
	// Of a wikilink: its text after "|", its size, and where it is in the source.
	Alias         string
	Width, Height int
	start, end    int
	// index is the link's index among the note's links (collectLinks) plus one; 0 for
	// none (a link within the note, or one past maxLinks).
	index int
}

func (n *wikiLinkNode) Kind() ast.NodeKind { return kindWikiLink }

func (n *wikiLinkNode) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Target": n.Target, "Fragment": n.Fragment, "Shown": n.Shown}, nil)
}

// maxWikiTarget is the longest `[[…]]` read as a link.
const maxWikiTarget = 255

// wikiInner reports whether inner, the text between `[[` and the first `]]` after it,
// makes a wikilink: it is one line of 1 to maxWikiTarget bytes, holds no other `[[` and
// does not start with `[` (`[[[a]]` is a "[" before `[[a]]`). A file's name may hold a
// bracket: `[[x[1].gif]]` names "x[1].gif".
func wikiInner(inner []byte) bool {
	return len(inner) > 0 && len(inner) <= maxWikiTarget && inner[0] != '[' &&
		!bytes.Contains(inner, []byte("[[")) && bytes.IndexByte(inner, '\n') < 0
}

func (wikilinks) Trigger() []byte { return []byte{'[', '!'} }

func (wikilinks) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, segment := block.PeekLine()
	open := 0
	if len(line) > 0 && line[0] == '!' {
		open = 1
	}
	if !bytes.HasPrefix(line[open:], []byte("[[")) {
		return nil
	}
	start := open + 2
	end := bytes.Index(line[start:], []byte("]]"))
	if end < 0 || !wikiInner(line[start:start+end]) {
		return nil
	}
	w := parseWikilink(string(line[start:start+end]), open == 1)
	if w.Target == "" && w.Fragment == "" {
		return nil
	}
	block.Advance(start + end + 2)
	n := &wikiLinkNode{Link: w.Link, Shown: w.Shown, Alias: w.Alias, Width: w.Width, Height: w.Height,
		start: segment.Start, end: segment.Start + start + end + 2}
	return withText(n, n.Shown)
}

// wikilink is the inside of a `[[…]]` read as Obsidian reads it.
type wikilink struct {
	Link
	Shown  string // what a page shows for it
	Alias  string // the text after "|", trimmed ("" for none)
	Width  int    // of an embed `![[x.png|300x200]]`: its size (0 for none)
	Height int
}

// parseWikilink reads inner, the text between `[[` and `]]`.
func parseWikilink(inner string, embed bool) wikilink {
	target, alias, aliased := strings.Cut(inner, "|")
	aliased = aliased && strings.TrimSpace(alias) != ""
	target = strings.TrimSuffix(target, `\`) // `\|` in a table
	name, fragment, _ := strings.Cut(target, "#")
	w := wikilink{Link: Link{Target: strings.TrimSpace(name), Fragment: strings.TrimSpace(fragment), Embed: embed},
		Alias: strings.TrimSpace(alias)}
	if embed && aliased {
		w.Width, w.Height = parseSize(w.Alias)
	}
	if w.Width > 0 {
		w.Alias = ""
	}
	switch {
	case w.Alias != "":
		w.Shown = w.Alias
	case embed && IsAttachment(w.Target):
		w.Shown = w.Target // a file the page cannot show is its name
	default:
		w.Shown = shownOf(w.Link)
	}
	return w
}

// shownOf is what Obsidian shows for a link without shown text: its target and each
// part of its fragment, joined by " > ".
func shownOf(l Link) string {
	parts := []string{}
	if l.Target != "" {
		parts = append(parts, l.Target)
	}
	if l.Fragment != "" {
		for _, p := range strings.Split(l.Fragment, "#") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
	}
	return strings.Join(parts, " > ")
}

// parseSize reads an Obsidian size, "300" or "300x200", each at most 5 digits; 0, 0
// when s is none.
func parseSize(s string) (width, height int) {
	w, h, hasHeight := strings.Cut(s, "x")
	width, height = dimension(w), 0
	if hasHeight {
		height = dimension(h)
		if height == 0 {
			return 0, 0
		}
	}
	return width, height
}

// dimension is s read as a size of at most 5 digits, or 0.
func dimension(s string) int {
	if s == "" || len(s) > 5 || strings.Trim(s, "0123456789") != "" {
		return 0
	}
	n, _ := strconv.Atoi(s)
	return n
}

func (wikilinks) Extend(m goldmark.Markdown) {
	// Before goldmark's links (200), which would read `[[x]]` as brackets around `[x]`.
	m.Parser().AddOptions(
		parser.WithInlineParsers(util.Prioritized(wikilinks{}, 198), util.Prioritized(linkEnds{}, 199)),
		parser.WithASTTransformers(util.Prioritized(noteLinks{}, 60), util.Prioritized(embedBlocks{}, 70)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(wikilinks{}, 199), util.Prioritized(embedBlocks{}, 199)))
}

func (wikilinks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindWikiLink, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		l := n.(*wikiLinkNode)
		s := w.(*sink)
		var open, closing string
		switch {
		case l.index > 0:
			tag := s.nonce + strconv.Itoa(l.index-1) + placeholderClose
			open, closing = linkOpen+tag, linkClose+tag
		case l.Target == "" && l.Anchor != "":
			open, closing = `<a class="wikilink" href="#`+string(util.EscapeHTML(util.URLEscape([]byte(l.Anchor), false)))+`">`, "</a>"
		default:
			open, closing = unresolvedOpen, unresolvedClose
		}
		if !entering {
			if l.Markdown {
				_, _ = s.WriteString(closing)
			}
			return ast.WalkContinue, nil
		}
		_, _ = s.WriteString(open)
		if l.Markdown {
			return ast.WalkContinue, nil
		}
		_, _ = s.Write(util.EscapeHTML([]byte(l.Shown)))
		_, _ = s.WriteString(closing)
		return ast.WalkSkipChildren, nil
	})
}
