package render

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Obsidian's block ids. A block whose last line ends in " ^id" (id: ASCII letters,
// digits and "-"; right after a wikilink or embed the space may be left out, as in
// "![[x.png]]^id"), or that is followed by a line holding only "^id", gets the id
// "^"+id in the page, and the marker is not shown:
//
//   - a paragraph gets it, unless it is in a list item (the item gets it) or it ends a
//     quote or callout (the quote or callout gets it);
//   - a table or a list followed by a line holding only "^id" gets it, as does a quote
//     or callout so followed after a blank line;
//   - the line "^id" after any other block (a heading, code) stays text.
//
// The first block given an id keeps it; a later marker with the same id is not shown
// and gives nothing an id. Heading anchors never hold a "^", so no block id can be the
// anchor of a heading.

// blockMarkers is the paragraph transformer that takes the block id markers out of a
// paragraph's lines, before tables are made of them, and notes which block each names.
type blockMarkers struct{}

// blockMarks are the block ids found, by the paragraph a marker ended (by the start of
// its first line, which stays when a tight list makes the paragraph a text block) or by
// the block a "^id" paragraph followed.
type blockMarks struct {
	lines map[int]string
	nodes map[ast.Node]string
}

var marksKey = parser.NewContextKey()

func blockMarksOf(pc parser.Context) *blockMarks {
	m, _ := pc.Get(marksKey).(*blockMarks)
	if m == nil {
		m = &blockMarks{lines: map[int]string{}, nodes: map[ast.Node]string{}}
		pc.Set(marksKey, m)
	}
	return m
}

// of is the block id that marks n, if any.
func (m *blockMarks) of(n ast.Node) (string, bool) {
	switch n.Kind() {
	case ast.KindParagraph, ast.KindTextBlock:
		if n.Lines().Len() > 0 {
			id, ok := m.lines[n.Lines().At(0).Start]
			return id, ok
		}
		return "", false
	}
	id, ok := m.nodes[n]
	return id, ok
}

// mark notes that id names paragraph p.
func (m *blockMarks) mark(p ast.Node, id string) {
	if p.Lines().Len() > 0 {
		m.lines[p.Lines().At(0).Start] = id
	}
}

func (blockMarkers) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	n := lines.Len()
	if n == 0 {
		return
	}
	last := lines.At(n - 1)
	value := util.TrimRightSpace(last.Value(reader.Source()))
	rest, id, ok := cutBlockID(value)
	if !ok {
		return
	}
	marks := blockMarksOf(pc)
	switch {
	case len(bytes.TrimSpace(rest)) > 0:
		lines.Set(n-1, last.WithStop(last.Start+len(util.TrimRightSpace(rest))))
		marks.mark(node, id)
	case n > 1:
		lines.SetSliced(0, n-1)
		marks.mark(node, id)
	default:
		prev := node.PreviousSibling()
		if prev == nil || !markable(prev) {
			return
		}
		if prev.Kind() == ast.KindParagraph {
			marks.mark(prev, id)
		} else {
			marks.nodes[prev] = id
		}
		node.Parent().RemoveChild(node.Parent(), node)
	}
}

// markable reports whether a "^id" line after n names n.
func markable(n ast.Node) bool {
	switch n.Kind() {
	case ast.KindParagraph, ast.KindList, ast.KindBlockquote, east.KindTable:
		return true
	}
	return false
}

// cutBlockID cuts the block id marker off the end of line: "text ^id" or "^id" alone.
func cutBlockID(line []byte) (rest []byte, id string, ok bool) {
	i := bytes.LastIndexByte(line, '^')
	if i < 0 || i+1 == len(line) || i > 0 && line[i-1] != ' ' && line[i-1] != '\t' && !bytes.HasSuffix(line[:i], []byte("]]")) {
		return nil, "", false
	}
	for _, c := range line[i+1:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return nil, "", false
		}
	}
	return line[:i], string(line[i+1:]), true
}

// markTarget is the element that gets the id of the marked block n: see the rules
// above.
func markTarget(n ast.Node) ast.Node {
	p := n.Parent()
	switch {
	case n.Kind() != ast.KindParagraph && n.Kind() != ast.KindTextBlock:
		return n
	case p != nil && p.Kind() == ast.KindListItem:
		return p
	case p != nil && p.Kind() == ast.KindBlockquote && p.LastChild() == n:
		return p
	}
	return n
}

// moveToTable gives the table that the table transformer made of the paragraph whose
// first line started at start the paragraph's mark: the marker ended the table.
func moveToTable(pc parser.Context, start int, parent, next ast.Node) {
	marks := blockMarksOf(pc)
	id, ok := marks.lines[start]
	if !ok || parent == nil {
		return
	}
	table := parent.LastChild()
	if next != nil {
		table = next.PreviousSibling()
	}
	if table != nil && table.Kind() == east.KindTable {
		delete(marks.lines, start)
		marks.nodes[table] = id
	}
}
