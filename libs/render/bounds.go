package render

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// bounds is the goldmark extension that keeps a parse linear in the length of the note.
// goldmark's own parsers do work quadratic in the length of a block for some inputs, and
// goldmark cannot be told to stop, so bounds refuses the constructs that would start that
// work, before goldmark's parsers see them:
//
//   - Containers (block quotes, list items, footnotes) nest at most maxNesting deep. For
//     each level goldmark measures the line's indentation from its start again, so a
//     line of 64 KiB of ">" took 2.9 s. The rest of a line that would open a container
//     deeper than that is shown as plain text.
//   - Each block (paragraph, heading, table cell) may cost goldmark workPerByte units
//     of work per byte, each unit a byte scanned, a line or a footnote definition
//     looked at or a delimiter passed over, and the blocks together workSlack more.
//     Before goldmark parses a link, wikilink, footnote reference, code span or
//     emphasis delimiter, bounds works out an upper bound of what the parse will look at: for a
//     link, the destination up to the next white space, its title up to its closing
//     character and its label; for a `[[`, the line up to the next `]]`; for a footnote
//     reference, every footnote definition; for a code span, the block up to the next
//     run of backticks as long; for a closing delimiter run, the delimiters back to the
//     opener it will match (delimiterList). A construct the
//     allowance cannot pay for is shown as plain text. Without it, 120 KiB of "[a](b"
//     took 1.9 s and 64 KiB of "*a_" 3.8 s, since goldmark scans to the end of the line
//     for each unclosed destination and back over every opener for each closer.
//
// A block with a construct shown as plain text is reported as a Fallback. Everyday notes
// stay far within both bounds: a link costs about its length, and a paragraph would
// need hundreds of emphasis delimiters for them to cost more than its length times
// workPerByte.
type bounds struct{}

// maxNesting is the deepest a container may be, counting the document and each block
// quote, list and list item around it (a level of a nested list is two).
const maxNesting = 32

// workPerByte and workSlack make the allowances of work (see bounds): workPerByte per
// byte of a block for the block, and workSlack for the whole note, which a block draws
// on when its own allowance is spent.
const (
	workPerByte = 32
	workSlack   = 256 << 10
)

// Reasons of the fallbacks of bounds.
const (
	reasonNesting = "nested too deeply"
	reasonWork    = "too many unclosed links or emphasis marks to parse"
)

func (bounds) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithBlockParsers(util.Prioritized(shallowBlocks{}, 1)),
		parser.WithParagraphTransformers(util.Prioritized(boundedDefinitions{}, 1)),
		parser.WithInlineParsers(util.Prioritized(boundedInline{}, 1)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(bounds{}, 100)))
}

func (bounds) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindClipped, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkSkipChildren, nil
		}
		s := w.(*sink)
		s.fallback(n.(*clippedNode).ref, reasonWork)
		gmhtml.DefaultWriter.RawWrite(s, n.(*clippedNode).Segment.Value(source))
		return ast.WalkSkipChildren, nil
	})
}

// shallowBlocks shows as plain text the rest of a line that would open a container
// deeper than maxNesting. It comes before every other block parser.
type shallowBlocks struct{}

func (shallowBlocks) Trigger() []byte {
	return []byte{'>', '-', '+', '*', '[', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'}
}

func (shallowBlocks) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if line, _ := reader.PeekLine(); pc.BlockOffset() >= 0 && bytes.HasPrefix(line[pc.BlockOffset():], []byte("[^")) {
		// Maybe a footnote's definition: see footnotes.
		n, _ := pc.Get(footnotesKey).(int)
		pc.Set(footnotesKey, n+1)
	}
	depth := 0
	for n := parent; n != nil && depth < maxNesting; n = n.Parent() {
		depth++
	}
	if depth < maxNesting || parent.Kind() == ast.KindList {
		// A list holds nothing but its items (goldmark's list parser relies on it):
		// the item opens, and the line is cut within it.
		return nil, parser.NoChildren
	}
	_, segment := reader.PeekLine()
	o := &oversized{reason: reasonNesting}
	o.Lines().Append(segment)
	reader.Advance(segment.Len() - 1)
	return o, parser.NoChildren
}

func (shallowBlocks) Continue(ast.Node, text.Reader, parser.Context) parser.State {
	return parser.Close
}

func (shallowBlocks) Close(ast.Node, text.Reader, parser.Context) {}

func (shallowBlocks) CanInterruptParagraph() bool { return true }

func (shallowBlocks) CanAcceptIndentedLine() bool { return false }

// footnotesKey counts the lines that may define a footnote. The footnote parser looks
// for a reference's definition among them all in turn.
var footnotesKey = parser.NewContextKey()

// boundedDefinitions shows as plain text a paragraph whose link reference definitions
// would cost goldmark more than the paragraph's allowance of work (see bounds): for
// each definition, goldmark copies the lines of the paragraph after it: a paragraph of
// definitions took time that grew with the square of their number.
type boundedDefinitions struct{}

func (boundedDefinitions) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	definitions, size := 0, 0
	for i := range lines.Len() {
		line := lines.At(i)
		size += line.Len()
		if b := bytes.TrimLeft(line.Value(reader.Source()), " "); len(b) > 0 && b[0] == '[' {
			definitions++
		}
	}
	w := work{left: workPerByte * size, slack: noteSlack(pc)}
	if w.afford(definitions * lines.Len()) {
		return
	}
	o := &oversized{reason: reasonWork}
	o.SetLines(lines)
	node.Parent().ReplaceChild(node.Parent(), node, o)
}

var kindClipped = ast.NewNodeKind("Clipped")

// clippedNode is a construct that bounds showed as plain text.
type clippedNode struct {
	ast.BaseInline
	Segment text.Segment
	ref     string // the fallback's: its block's first line
}

func (n *clippedNode) Kind() ast.NodeKind { return kindClipped }

func (n *clippedNode) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// boundedInline charges each construct that can make goldmark scan far to its block's
// allowance, and shows it as plain text when the allowance cannot pay for it. It comes
// before every other inline parser of its triggers, and otherwise leaves the construct
// to them.
type boundedInline struct{}

func (boundedInline) Trigger() []byte { return []byte{'[', '!', ']', '*', '_', '~', '=', '`'} }

var workKey, slackKey = parser.NewContextKey(), parser.NewContextKey()

// noteSlack is the note's slack still unspent (see workSlack).
func noteSlack(pc parser.Context) *int {
	slack, _ := pc.Get(slackKey).(*int)
	if slack == nil {
		slack = new(int)
		*slack = workSlack
		pc.Set(slackKey, slack)
	}
	return slack
}

// afford reports whether the block's allowance, or else the note's slack, can pay cost,
// and if so pays it.
func (w *work) afford(cost int) bool {
	switch {
	case cost <= w.left:
		w.left -= cost
	case cost-w.left <= *w.slack:
		*w.slack -= cost - w.left
		w.left = 0
	default:
		return false
	}
	return true
}

// work is the account of the block being parsed, kept in the parser's context.
type work struct {
	block ast.Node
	lines *text.Segments
	line  int  // the index of the line the parse is in
	end   int  // where the block's last line stops in the source
	left  int  // the block's allowance still unspent
	slack *int // the note's
	// openers are the positions of the `[` let through and not yet closed.
	openers []int
	// footnotes are the lines that may define a footnote.
	footnotes int
	ref       string // the block's first line, for fallbacks
	// runs are the positions of the block's runs of backticks, by their length, from
	// the first that a code span may close on; nil until a code span opens.
	runs map[int][]int
	// delimiters follows goldmark's list of the block's delimiters, for what a closing
	// one costs.
	delimiters     delimiterList
	delimitersOver bool // a delimiter run was over the allowance
	// The searches ahead, each for one kind of character; see ahead.
	space, nonSpace, angle, bracket, wiki, quote, apostrophe, paren ahead
}

// account is the work account of block, a fresh one when the parse has moved to it.
func account(block ast.Node, pc parser.Context) *work {
	if w, ok := pc.Get(workKey).(*work); ok && w.block == block {
		return w
	}
	footnotes, _ := pc.Get(footnotesKey).(int)
	lines := block.Lines()
	w := &work{block: block, lines: lines, slack: noteSlack(pc), footnotes: footnotes}
	for i := range lines.Len() {
		line := lines.At(i)
		w.left += workPerByte * line.Len()
	}
	if lines.Len() > 0 {
		w.end = lines.At(lines.Len() - 1).Stop
	}
	pc.Set(workKey, w)
	return w
}

func (boundedInline) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, segment := block.PeekLine()
	if len(line) == 0 {
		return nil
	}
	w := account(parent, pc)
	src := block.Source()
	at, end := segment.Start, max(w.end, segment.Stop)
	var cost int
	switch c := line[0]; c {
	case '!':
		if len(line) < 2 || line[1] != '[' {
			return nil
		}
		cost = w.opener(src, at+1, segment.Stop)
	case '[':
		cost = w.opener(src, at, segment.Stop)
	case '`':
		n := len(line) - len(bytes.TrimLeft(line, "`"))
		if !w.afford(w.codeSpan(src, at, n)) {
			return w.clip(block, segment, n)
		}
		return nil
	case ']':
		// Without an opener goldmark's link parser does nothing. openers holds every
		// `[` goldmark's does, and some more: a `]` may be charged for nothing, not
		// the other way round.
		cost = 1
		if k := len(w.openers); k > 0 {
			// goldmark copies the label of a link that is not inline, out of the
			// block's lines from the last one back.
			cost = w.closer(src, at, end) + at - w.openers[k-1] + w.linesAfter(at)
		}
	default:
		d := parser.ScanDelimiter(line, block.PrecendingCharacter(), 1, runOf(c))
		if d == nil || c == '=' && d.OriginalLength != 2 || c == '~' && d.OriginalLength > 2 {
			return nil // no delimiter: highlights take `==`, strikethrough `~` and `~~`
		}
		if !w.delimitersOver {
			if w.afford(w.delimiters.push(d)) {
				return nil
			}
			// The list no longer follows goldmark's, which will not have d: the
			// block's later delimiter runs are text too.
			w.delimitersOver = true
		}
		return w.clip(block, segment, d.OriginalLength)
	}
	if !w.afford(cost) {
		return w.clip(block, segment, 1)
	}
	switch line[0] {
	case '!':
		w.openers = append(w.openers, at+1)
	case '[':
		if !w.wikilink(src, at, segment.Stop) {
			w.openers = append(w.openers, at)
		}
	case ']':
		if k := len(w.openers); k > 0 {
			w.openers = w.openers[:k-1]
		}
	}
	return nil
}

// clip shows the n bytes at the start of segment, where the block's parse is, as text.
func (w *work) clip(block text.Reader, segment text.Segment, n int) ast.Node {
	if w.ref == "" && w.lines.Len() > 0 {
		first := w.lines.At(0)
		b := first.Value(block.Source())
		w.ref = firstLine(string(b[:min(len(b), 4*80)])) // a character has at most 4 bytes
	}
	clipped := &clippedNode{Segment: segment.WithStop(segment.Start + n), ref: w.ref}
	block.Advance(n)
	return withText(clipped, string(clipped.Segment.Value(block.Source())))
}

// opener is the cost of the `[` at i, whose line stops at stop: what the wikilink parser
// scans for its `]]`, and what the footnote parser scans for its `]`.
func (w *work) opener(src []byte, i, stop int) int {
	cost := 1
	switch {
	case bytes.HasPrefix(src[i:stop], []byte("[[")):
		cost += w.wiki.find(src, i+2, stop, indexWiki) - i
	case bytes.HasPrefix(src[i:stop], []byte("[^")):
		// Its label, copied out of the block's lines, and each definition in turn.
		cost += min(w.bracket.find(src, i+2, stop, indexBracket)-i, 1000) + w.linesAfter(i) + w.footnotes
	}
	return cost
}

// codeSpan is the cost of the run of n backticks at i: goldmark's code span parser
// looks for the next run as long, through the rest of the block. 16 KiB of "`a“a```a…"
// took a time that grew with the power 1.5 of its length.
func (w *work) codeSpan(src []byte, i, n int) int {
	if w.runs == nil {
		w.runs = map[int][]int{}
		for k := range w.lines.Len() {
			line := w.lines.At(k)
			for j := line.Start; j < line.Stop; {
				if src[j] != '`' {
					j++
					continue
				}
				start := j
				for j < line.Stop && src[j] == '`' {
					j++
				}
				w.runs[j-start] = append(w.runs[j-start], start)
			}
		}
	}
	runs := w.runs[n]
	for len(runs) > 0 && runs[0] <= i {
		runs = runs[1:]
	}
	w.runs[n] = runs
	if len(runs) == 0 {
		return 1 + w.end - i
	}
	return 1 + runs[0] - i
}

// wikilink reports whether the `[` at i, whose line stops at stop, opens a wikilink,
// which takes its `]]` along, as the wikilinks parser decides.
func (w *work) wikilink(src []byte, i, stop int) bool {
	if !bytes.HasPrefix(src[i:stop], []byte("[[")) {
		return false
	}
	end := w.wiki.find(src, i+2, stop, indexWiki)
	return end < stop && end > i+2 && end-i-2 <= maxWikiTarget && !bytes.ContainsAny(src[i+2:end], "[]\n")
}

// linesAfter is the number of the block's lines from the one of position i to the last.
func (w *work) linesAfter(i int) int {
	for w.line < w.lines.Len()-1 && w.lines.At(w.line).Stop <= i {
		w.line++
	}
	return w.lines.Len() - w.line
}

// closer is the cost of the `]` at i, in a block that ends at end: goldmark's link
// parser scans an inline link's destination and title, or a reference link's label.
func (w *work) closer(src []byte, i, end int) int {
	if i+1 >= end {
		return 1
	}
	switch src[i+1] {
	case '(':
		// The destination: after spaces, up to its `>` or to the next white space.
		dest := w.nonSpace.find(src, i+2, end, indexNonSpace)
		var stop int
		if dest < end && src[dest] == '<' {
			stop = w.angle.find(src, dest+1, end, indexAngle)
		} else {
			stop = w.space.find(src, dest, end, indexSpace)
		}
		// The title: after spaces, up to its closing character.
		title := w.nonSpace.find(src, stop, end, indexNonSpace)
		if title < end {
			switch src[title] {
			case '"':
				title = w.quote.find(src, title+1, end, indexQuote)
			case '\'':
				title = w.apostrophe.find(src, title+1, end, indexApostrophe)
			case '(':
				title = w.paren.find(src, title+1, end, indexParen)
			}
		}
		return 1 + title - i
	case '[':
		return 1 + w.bracket.find(src, i+2, end, indexBracket) - i
	}
	return 1
}

// ahead caches a search forward for one kind of character: at is the first match at or
// after from, or limit if there is none before it. Each block's constructs are parsed
// in the order of the source, so most searches start within the last one's range and
// are answered at once, and the searches together scan each byte about once.
type ahead struct{ from, at, limit int }

func (a *ahead) find(src []byte, from, limit int, index func([]byte) int) int {
	if from >= limit {
		return limit
	}
	if a.limit == limit && a.from <= from && from <= a.at {
		return a.at
	}
	at := limit
	if i := index(src[from:limit]); i >= 0 {
		at = from + i
	}
	*a = ahead{from: from, at: at, limit: limit}
	return at
}

func indexSpace(b []byte) int { return bytes.IndexAny(b, " \t\n\r\v\f") }
func indexNonSpace(b []byte) int {
	for i, c := range b {
		if !util.IsSpace(c) {
			return i
		}
	}
	return -1
}
func indexAngle(b []byte) int      { return bytes.IndexAny(b, ">\n") }
func indexBracket(b []byte) int    { return bytes.IndexByte(b, ']') }
func indexWiki(b []byte) int       { return bytes.Index(b, []byte("]]")) }
func indexQuote(b []byte) int      { return bytes.IndexByte(b, '"') }
func indexApostrophe(b []byte) int { return bytes.IndexByte(b, '\'') }
func indexParen(b []byte) int      { return bytes.IndexByte(b, ')') }

// delimiterList follows goldmark's list of a block's delimiters as the block is parsed,
// to tell what each closing delimiter will cost: goldmark matches the closing ones (in
// parser.ProcessDelimiters, once the block is parsed) from first to last, each by
// looking back over the list for the nearest opening one of its character that the
// rule of three allows, and removes what lies between. A closing one that matches
// nothing costs a look over the whole list; that is how 64 KiB of "*a_" took 3.8 s.
type delimiterList struct {
	list []listed
	// openers holds the indexes in list of the opening delimiters, by character, the
	// remainder of the run's length by three and whether they can close too: the
	// nearest one of a kind is last.
	openers [4][3][2][]int
}

// listed is a delimiter run in a delimiterList.
type listed struct {
	c      int // the index of its character in delimiterChars
	length int // the characters not yet matched
}

const delimiterChars = "*_~="

// push adds the run d (its character one of delimiterChars) and matches it as goldmark
// will, and returns what that costs goldmark, in list entries looked over.
func (l *delimiterList) push(d *parser.Delimiter) int {
	c := strings.IndexByte(delimiterChars, d.Char)
	cost, length := 0, d.Length
	for length > 0 && d.CanClose {
		at := l.nearest(c, d)
		if at < 0 {
			cost += len(l.list) // a look over the whole list, for nothing
			break
		}
		cost += len(l.list) - at
		consume := 1
		if l.list[at].length >= 2 && length >= 2 {
			consume = 2
		}
		length -= consume
		l.truncate(at + 1) // goldmark removes the delimiters between the two
		if l.list[at].length -= consume; l.list[at].length <= 0 {
			l.truncate(at)
		}
	}
	if length > 0 && (d.CanOpen || d.CanClose) {
		l.list = append(l.list, listed{c: c, length: length})
		if d.CanOpen {
			kind := &l.openers[c][d.OriginalLength%3][b2i(d.CanClose)]
			*kind = append(*kind, len(l.list)-1)
		}
	}
	return cost
}

// nearest is the index of the nearest opener in the list that the run d (of the
// character c) may close by the rule of three that goldmark applies
// (parser.Delimiter.CalcComsumption), or -1.
func (l *delimiterList) nearest(c int, d *parser.Delimiter) int {
	at := -1
	for rest := range 3 {
		for closes := range 2 {
			if (closes == 1 || d.CanOpen) && (rest+d.OriginalLength)%3 == 0 && d.OriginalLength%3 != 0 {
				continue
			}
			if kind := l.openers[c][rest][closes]; len(kind) > 0 {
				at = max(at, kind[len(kind)-1])
			}
		}
	}
	return at
}

// truncate keeps the first size entries of the list.
func (l *delimiterList) truncate(size int) {
	l.list = l.list[:min(size, len(l.list))]
	for c := range l.openers {
		for rest := range l.openers[c] {
			for closes := range l.openers[c][rest] {
				kind := l.openers[c][rest][closes]
				for len(kind) > 0 && kind[len(kind)-1] >= size {
					kind = kind[:len(kind)-1]
				}
				l.openers[c][rest][closes] = kind
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runOf is the delimiter processor that parser.ScanDelimiter needs to measure a run of
// c; bounds only reads whether the run can open or close.
type runOf byte

func (r runOf) IsDelimiter(b byte) bool { return b == byte(r) }

func (runOf) CanOpenCloser(opener, closer *parser.Delimiter) bool { return opener.Char == closer.Char }

func (runOf) OnMatch(int) ast.Node { return nil }
