package render

import (
	"slices"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// footnotes is goldmark's footnote extension, with Obsidian's inline footnotes: "^[text]"
// is a footnote whose text is written in place. Its text is Markdown like a link's:
// brackets nest within it, and emphasis opened within it closes within it. It is
// numbered in the order of the references together with the footnotes "[^1]", and shown
// in the same list. Code spans, math, wikilinks and comments are parsed before it, so a
// "^[" within them stays text, and so does one that is never closed.
//
// goldmark parses the text the way it parses a link's: the "^[" is a delimiter that
// neither opens nor closes, so that the emphasis within the footnote is matched up to
// it when the footnote closes (as goldmark's link parser does for a link's text, with
// ProcessDelimiters), then its nodes are moved into the footnote. That is work linear
// in the nodes within the footnote, each moved once into the innermost footnote around
// it; bounds follows the "^[" in its account of the delimiters (delimiterList.fence)
// and of the brackets.
type footnotes struct{}

// The priorities of the parsers: bracketsAfter sees the "[" and "![" that goldmark's
// link parser (200) sees, after the footnote references (101) and wikilinks (198) took
// theirs; inlineFootnoteEnds sees the "]" before linkEnds (199) does.
const (
	bracketsPriority = 199
	endsPriority     = 197
)

func (footnotes) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithBlockParsers(util.Prioritized(extension.NewFootnoteBlockParser(), 999)),
		parser.WithInlineParsers(
			util.Prioritized(footnoteRefs{extension.NewFootnoteParser()}, 101),
			util.Prioritized(bracketsAfter{}, bracketsPriority),
			util.Prioritized(inlineFootnoteEnds{}, endsPriority),
		),
		parser.WithASTTransformers(
			util.Prioritized(extension.NewFootnoteASTTransformer(), 999),
			util.Prioritized(footnotes{}, 1000), // after goldmark's, which numbers the others
		),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(
		util.Prioritized(extension.NewFootnoteHTMLRenderer(extension.WithFootnoteIDPrefix(IDPrefix)), 500)))
}

// inlineFootnote is an inline footnote: its text while it is parsed, replaced by a
// footnote and its reference when the document is.
type inlineFootnote struct {
	ast.BaseInline
	closed bool
}

var kindInlineFootnote = ast.NewNodeKind("InlineFootnote")

func (n *inlineFootnote) Kind() ast.NodeKind { return kindInlineFootnote }

func (n *inlineFootnote) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// footnoteOrder lists the references of a document, to footnotes and inline footnotes,
// in the order goldmark parsed them.
type footnoteOrder struct {
	refs   []footnoteRef
	inline bool // whether an inline footnote is among them
}

// footnoteRef is a reference to a footnote (link) or an inline footnote (note).
type footnoteRef struct {
	link *east.FootnoteLink
	note *inlineFootnote
}

var footnoteOrderKey, bracketsKey = parser.NewContextKey(), parser.NewContextKey()

func footnoteOrderOf(pc parser.Context) *footnoteOrder {
	o, _ := pc.Get(footnoteOrderKey).(*footnoteOrder)
	if o == nil {
		o = &footnoteOrder{}
		pc.Set(footnoteOrderKey, o)
	}
	return o
}

// footnoteRefs is goldmark's parser of footnote references, noting each in the order.
type footnoteRefs struct{ parser.InlineParser }

func (r footnoteRefs) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	n := r.InlineParser.Parse(parent, block, pc)
	if link, ok := n.(*east.FootnoteLink); ok {
		o := footnoteOrderOf(pc)
		o.refs = append(o.refs, footnoteRef{link: link})
	}
	return n
}

// brackets are the brackets of the block being parsed that are open within an inline
// footnote, innermost last: the inline footnotes' and the "[" of links. A "]" closes
// the innermost, as goldmark's link parser takes it when that is a link's.
type brackets struct {
	block ast.Node
	open  []openBracket
}

// openBracket is an open inline footnote, or a link's "[" when note is nil.
type openBracket struct {
	note  *inlineFootnote
	delim *parser.Delimiter // the "^[" in goldmark's list of delimiters
	fence int               // its index in bounds' (delimiterList.fence)
}

// bracketsOf are the open brackets of block.
func bracketsOf(block ast.Node, pc parser.Context) *brackets {
	b, _ := pc.Get(bracketsKey).(*brackets)
	if b == nil || b.block != block {
		b = &brackets{block: block}
		pc.Set(bracketsKey, b)
	}
	return b
}

// bracketsAfter opens inline footnotes at "^[", and notes the "[" and "![" of links
// within them.
type bracketsAfter struct{}

func (bracketsAfter) Trigger() []byte { return []byte{'^', '[', '!'} }

func (bracketsAfter) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, segment := block.PeekLine()
	b := bracketsOf(parent, pc)
	switch {
	case len(line) >= 2 && line[0] == '^' && line[1] == '[':
		return b.openFootnote(parent, block, segment, pc)
	case len(b.open) > 0 && (line[0] == '[' || len(line) >= 2 && line[0] == '!' && line[1] == '['):
		b.open = append(b.open, openBracket{})
	}
	return nil
}

// openFootnote opens the inline footnote whose "^[" starts segment.
func (b *brackets) openFootnote(parent ast.Node, block text.Reader, segment text.Segment, pc parser.Context) ast.Node {
	w := account(parent, pc)
	d := parser.NewDelimiter(false, false, 2, '^', runOf('^'))
	d.Segment = segment.WithStop(segment.Start + 2)
	pc.PushDelimiter(d)
	note := &inlineFootnote{}
	b.open = append(b.open, openBracket{note: note, delim: d, fence: w.delimiters.fence()})
	// bounds charges the "]" that closes it as one that closes a link's "[".
	w.openers = append(w.openers, segment.Start+1)
	o := footnoteOrderOf(pc)
	o.refs, o.inline = append(o.refs, footnoteRef{note: note}), true
	block.Advance(2)
	return d
}

// inlineFootnoteEnds closes the innermost bracket at "]": an inline footnote here, a
// link's "[" by goldmark's link parser after it.
type inlineFootnoteEnds struct{}

func (inlineFootnoteEnds) Trigger() []byte { return []byte{']'} }

func (inlineFootnoteEnds) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	b := bracketsOf(parent, pc)
	k := len(b.open)
	if k == 0 {
		return nil
	}
	top := b.open[k-1]
	b.open = b.open[:k-1]
	if top.note == nil {
		return nil
	}
	// Match the emphasis within, as goldmark does within a link's text, then take the
	// "^[" out of the list and the block.
	parser.ProcessDelimiters(top.delim, pc)
	for c := top.delim.NextSibling(); c != nil; {
		next := c.NextSibling()
		top.note.AppendChild(top.note, c)
		c = next
	}
	top.delim.Length = 0
	pc.RemoveDelimiter(top.delim)
	account(parent, pc).delimiters.unfence(top.fence)
	top.note.closed = true
	block.Advance(1)
	return top.note
}

// Transform numbers the footnotes and the inline footnotes together, in the order of
// their first references, and moves the text of each inline footnote into the
// footnote list, leaving its reference in its place. goldmark's transformer, before it,
// has numbered the footnotes and moved their list to the end of the document.
func (footnotes) Transform(doc *ast.Document, _ text.Reader, pc parser.Context) {
	o, _ := pc.Get(footnoteOrderKey).(*footnoteOrder)
	if o == nil || !o.inline {
		return
	}
	numbers := map[int]int{} // of the footnotes, by goldmark's number
	var notes []ast.Node
	n := 0
	for _, r := range o.refs {
		switch {
		case r.link != nil:
			if _, ok := numbers[r.link.Index]; !ok {
				n++
				numbers[r.link.Index] = n
			}
		case r.note.closed && r.note.Parent() != nil:
			n++
			notes = append(notes, r.note.replace(n))
		}
	}
	if n == 0 {
		return
	}
	for _, r := range o.refs {
		if r.link != nil {
			r.link.Index = numbers[r.link.Index]
		}
	}
	list, ok := doc.LastChild().(*east.FootnoteList)
	if !ok {
		list = east.NewFootnoteList()
		doc.AppendChild(doc, list)
	}
	renumber(list, numbers)
	// In order of their numbers. (ast.Node.SortChildren is an insertion sort, quadratic
	// in the number of footnotes.)
	for c := list.FirstChild(); c != nil; c = list.FirstChild() {
		list.RemoveChild(list, c)
		notes = append(notes, c)
	}
	slices.SortFunc(notes, func(a, b ast.Node) int { return a.(*east.Footnote).Index - b.(*east.Footnote).Index })
	for _, note := range notes {
		list.AppendChild(list, note)
	}
	list.Count = n
}

// renumber gives the footnotes of list, and their links back, their numbers by
// goldmark's.
func renumber(list *east.FootnoteList, numbers map[int]int) {
	_ = ast.Walk(list, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		switch c := c.(type) {
		case *east.Footnote:
			if entering {
				c.Index = numbers[c.Index]
			}
		case *east.FootnoteBacklink:
			if entering {
				c.Index = numbers[c.Index]
			}
		}
		return ast.WalkContinue, nil
	})
}

// replace puts the reference to footnote number i in the inline footnote's place and
// returns the footnote: its text as a paragraph, with the link back.
func (n *inlineFootnote) replace(i int) *east.Footnote {
	p := ast.NewParagraph()
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		p.AppendChild(p, c)
		c = next
	}
	back := east.NewFootnoteBacklink(i)
	back.RefCount = 1
	p.AppendChild(p, back)
	fn := east.NewFootnote(nil)
	fn.Index = i
	fn.AppendChild(fn, p)
	link := east.NewFootnoteLink(i)
	link.RefCount = 1
	n.Parent().ReplaceChild(n.Parent(), n, link)
	return fn
}
