package render

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// outlines is the goldmark extension of heading anchors and block ids: blockMarkers
// takes the block id markers out of paragraphs (after link reference definitions, before
// tables), and outliner gives the ids and makes the note's Outline.
type outlines struct{}

func (outlines) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithParagraphTransformers(util.Prioritized(blockMarkers{}, 150)),
		parser.WithASTTransformers(util.Prioritized(outliner{}, 50)),
	)
}

// IDPrefix starts the ids of a note's headings and footnotes. The page around a note, and
// the notes embedded in it, use ids that do not start with it, so that no heading of a
// note can take an id of the page, and a link into a note always lands in that note. A
// block's id is "^" and its own id, as Obsidian links to it (#^id): no id of the page
// starts with "^".
const IDPrefix = "n-"

// Outline is what links into a note need of it: its headings and block ids, in document
// order. It is small and JSON-able, so that it can be stored beside a render.
type Outline struct {
	Headings []Heading `json:"h,omitempty"`
	// Blocks are the ids of the note's blocks as written, without the "^"; an id given
	// to more than one block names the first.
	Blocks []string `json:"b,omitempty"`
	// BlockSpans are where each of Blocks is in the render's HTML, by index (see Span).
	BlockSpans []Span `json:"bs,omitempty"`
}

// Span is a part of a render's HTML, in bytes: a block, or a heading's section (the
// heading up to the next heading of the same or a higher level, or the footnotes). It is
// measured on the final HTML by markers that the render writes and takes out again
// (spans.go), so that an embed cuts it without parsing the HTML, and no note can forge it.
type Span struct {
	Start int `json:"s"`
	End   int `json:"e"`
}

// Heading is a heading of a note.
type Heading struct {
	Level int `json:"l"`
	// Text is the heading as written (its Markdown, trimmed, the lines of a setext
	// heading joined by a space), at most maxHeadingText bytes of it.
	Text string `json:"t"`
	// Anchor is its id in the page, IDPrefix included.
	Anchor string `json:"a"`
	// Key is Text as links are matched to it (see Outline.Anchor), kept so that
	// matching a link takes no more than comparing two strings per heading.
	Key string `json:"k"`
	// Section is the heading's section in the HTML: nil for a heading inside another
	// block (a list, a quote, a callout), whose section an embed cannot cut.
	Section *Span `json:"s,omitempty"`
}

// maxHeadingText caps the text an outline keeps of a heading: no link names a longer
// one (a wikilink is at most maxWikiTarget bytes).
const maxHeadingText = 1024

// A heading's anchor is made of its text as written, lower-cased: its letters (with
// their combining marks), digits, "-" and "_" of every script are kept; each run of
// white space between them becomes one "-"; everything else (punctuation, symbols,
// emoji) is left out. "Part Two: Überblick" is "part-two-überblick", "日本語の見出し"
// stays as it is. A heading with none of them is "heading". The second heading with the
// same anchor gets "-1" after it, the third "-2", and so on in document order, skipping
// any anchor already taken. IDPrefix comes before it.
func slug(heading string) string {
	var b strings.Builder
	space := false
	for _, r := range heading {
		switch {
		case unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			if space && b.Len() > 0 {
				b.WriteByte('-')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsSpace(r):
			space = true
		}
	}
	if b.Len() == 0 {
		return "heading"
	}
	return b.String()
}

// anchors hands out unique heading anchors.
type anchors struct {
	used map[string]bool
	next map[string]int // the next suffix to try for each anchor
}

func (a *anchors) unique(base string) string {
	if a.used == nil {
		a.used, a.next = map[string]bool{}, map[string]int{}
	}
	id := base
	for a.used[id] {
		a.next[base]++
		id = base + "-" + strconv.Itoa(a.next[base])
	}
	a.used[id] = true
	return id
}

// headingText is the text of heading h as written, trimmed.
func headingText(h *ast.Heading, source []byte) string {
	var b strings.Builder
	lines := h.Lines()
	for i := range lines.Len() {
		line := lines.At(i)
		if i > 0 {
			b.WriteByte(' ')
		}
		b.Write(line.Value(source))
	}
	return strings.TrimSpace(b.String())
}

// outliner is the AST transformer that gives each heading its anchor and each marked
// block its id (see blockMarkers), and keeps the note's outline in the parser's context.
// It runs before callouts, which keep the id of the quote they replace.
type outliner struct{}

var outlineKey = parser.NewContextKey()

func (outliner) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	source := reader.Source()
	o := &Outline{}
	var ids anchors
	blocks := map[string]bool{}
	marks := blockMarksOf(pc)
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if h, ok := n.(*ast.Heading); ok {
			t := headingText(h, source)
			id := IDPrefix + ids.unique(slug(t))
			h.SetAttributeString("id", []byte(id))
			t = strings.ToValidUTF8(t[:min(len(t), maxHeadingText)], "")
			o.Headings = append(o.Headings, Heading{Level: h.Level, Text: t, Anchor: id, Key: foldedKey(t)})
			return ast.WalkContinue, nil
		}
		if id, ok := marks.of(n); ok && !blocks[id] {
			blocks[id] = true
			o.Blocks = append(o.Blocks, id)
			markTarget(n).SetAttributeString("id", []byte(blockAnchor(id)))
		}
		return ast.WalkContinue, nil
	})
	pc.Set(outlineKey, o)
}

// outlineOf is the outline outliner kept in pc.
func outlineOf(pc parser.Context) *Outline {
	o, _ := pc.Get(outlineKey).(*Outline)
	if o == nil {
		o = &Outline{}
	}
	return o
}

// blockAnchor is the id in the page of the block with id.
func blockAnchor(id string) string { return "^" + id }

// Anchor is the id in the page of what fragment names in the note, as a link writes it
// after the note's name and a "#":
//
//   - "^id": the block with that id (ids are compared exactly);
//   - "Heading": the first heading whose text matches;
//   - "A#B" (and "A#B#C"…): the first heading matching B inside the section of the
//     first heading matching A, the section being the headings after A up to the next
//     one of the same or a higher level.
//
// A heading's text matches a part of the fragment as Obsidian matches them: both are
// read with ASCII punctuation but "-", "_" and "'" as spaces (headingPunctuation: a link
// cannot carry some of it, and Obsidian leaves it out of the links it writes), their
// white space trimmed and each run of it as one space, and compared case-insensitively
// (Unicode simple case folding): "Q: why?" and "`f()`" match the links "#Q why" and "#f". ok is false when nothing matches; a link should then lead to the page
// itself. A call compares one string per heading (Heading.Key).
func (o Outline) Anchor(fragment string) (anchor string, ok bool) {
	heading, block := o.find(fragment)
	switch {
	case block >= 0:
		return blockAnchor(o.Blocks[block]), true
	case heading >= 0:
		return o.Headings[heading].Anchor, true
	}
	return "", false
}

// Cut is the span of the render's HTML that an embed with fragment shows (see Anchor
// for how fragment names a heading or a block): the heading's section, or the block; the
// whole HTML (of length n) for no fragment. ok is false when fragment names nothing, or a
// heading inside another block.
func (o Outline) Cut(fragment string, n int) (Span, bool) {
	if strings.TrimSpace(fragment) == "" {
		return Span{0, n}, true
	}
	heading, block := o.find(fragment)
	var s *Span
	switch {
	case block >= 0 && block < len(o.BlockSpans):
		s = &o.BlockSpans[block]
	case heading >= 0:
		s = o.Headings[heading].Section
	}
	if s == nil || s.Start < 0 || s.Start >= s.End || s.End > n {
		return Span{}, false
	}
	return *s, true
}

// SameAnchors reports whether a and b give every link the same anchor: the same
// headings and block ids, whatever their spans.
func SameAnchors(a, b Outline) bool {
	return slices.Equal(a.Blocks, b.Blocks) && slices.EqualFunc(a.Headings, b.Headings, func(x, y Heading) bool {
		return x.Level == y.Level && x.Text == y.Text && x.Anchor == y.Anchor && x.Key == y.Key
	})
}

// find is the index of the heading or of the block that fragment names, -1 for none.
func (o Outline) find(fragment string) (heading, block int) {
	if id, isBlock := strings.CutPrefix(strings.TrimSpace(fragment), "^"); isBlock {
		return -1, slices.Index(o.Blocks, id)
	}
	from, end := 0, len(o.Headings) // the headings to look through
	found := -1
	for _, part := range strings.Split(fragment, "#") {
		key := foldedKey(part)
		if key == "" {
			continue
		}
		found = -1
		for i := from; i < end && found < 0; i++ {
			if o.Headings[i].Key == key {
				found = i
			}
		}
		if found < 0 {
			return -1, -1
		}
		from, end = found+1, found+1
		for end < len(o.Headings) && o.Headings[end].Level > o.Headings[found].Level {
			end++
		}
	}
	return found, -1
}

// headingPunctuation is what Obsidian reads as white space when it matches a link's
// fragment to a heading: ASCII punctuation but "-", "_" and "'".
const headingPunctuation = "!\"#$%&()*+,./:;<=>?@[\\]^`{|}~"

// matchKey is s as Anchor compares it, before case folding.
func matchKey(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(headingPunctuation, r)
	}), " ")
}

// foldedKey is s's match key with each letter folded to one case.
func foldedKey(s string) string { return strings.Map(fold, matchKey(s)) }

// fold is the least rune of r's orbit under Unicode simple case folding, an ASCII
// letter lower-cased: two runes are the same letter up to case exactly when their folds
// are equal.
func fold(r rune) rune {
	least := r
	if r >= utf8.RuneSelf {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
	}
	if 'A' <= least && least <= 'Z' {
		least += 'a' - 'A'
	}
	return least
}
