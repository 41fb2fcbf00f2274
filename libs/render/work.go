package render

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

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

// account is the work account of block: the one the parse keeps, made fresh for block
// when the parse has moved to it. One account serves every block of a parse, in turn: a
// note of many short blocks with links would otherwise allocate one per block.
func account(block ast.Node, pc parser.Context) *work {
	w, _ := pc.Get(workKey).(*work)
	if w != nil && w.block == block {
		return w
	}
	if w == nil {
		w = &work{}
		pc.Set(workKey, w)
	}
	w.reset()
	footnotes, _ := pc.Get(footnotesKey).(int)
	lines := block.Lines()
	w.block, w.lines, w.slack, w.footnotes = block, lines, noteSlack(pc), footnotes
	for i := range lines.Len() {
		line := lines.At(i)
		w.left += workPerByte * line.Len()
	}
	if lines.Len() > 0 {
		w.end = lines.At(lines.Len() - 1).Stop
	}
	return w
}

// reset makes w a fresh account, keeping the room of its slices.
func (w *work) reset() {
	d := w.delimiters
	d.reset()
	*w = work{openers: w.openers[:0], delimiters: d}
}

func (boundedInline) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, segment := block.PeekLine()
	if len(line) == 0 {
		return nil
	}
	w := account(parent, pc)
	switch line[0] {
	case '!', '[', ']':
		return w.linkBracket(block, line, segment)
	case '`':
		return w.backticks(block, line, segment)
	}
	return w.delimiterRun(block, line, segment)
}

// linkBracket charges the `[`, `![` or `]` at the start of line, which starts segment, and
// shows it as text when the allowance cannot pay for it.
func (w *work) linkBracket(block text.Reader, line []byte, segment text.Segment) ast.Node {
	src := block.Source()
	at := segment.Start
	var cost int
	switch line[0] {
	case '!':
		if len(line) < 2 || line[1] != '[' {
			return nil
		}
		cost = w.opener(src, at+1, segment.Stop)
	case '[':
		cost = w.opener(src, at, segment.Stop)
	case ']':
		// Without an opener goldmark's link parser does nothing. openers holds every
		// `[` goldmark's does, and some more: a `]` may be charged for nothing, not
		// the other way round.
		cost = 1
		if k := len(w.openers); k > 0 {
			// goldmark copies the label of a link that is not inline, out of the
			// block's lines from the last one back.
			cost = w.closer(src, at, max(w.end, segment.Stop)) + at - w.openers[k-1] + w.linesAfter(at)
		}
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

// backticks charges the run of backticks at the start of line, which starts segment,
// and shows it as text when the allowance cannot pay for the code span it may open.
func (w *work) backticks(block text.Reader, line []byte, segment text.Segment) ast.Node {
	n := len(line) - len(bytes.TrimLeft(line, "`"))
	if !w.afford(w.codeSpan(block.Source(), segment.Start, n)) {
		return w.clip(block, segment, n)
	}
	return nil
}

// delimiterRun charges the emphasis, highlight or strikethrough delimiters at the start
// of line, which starts segment, and shows them as text when the allowance cannot pay
// for them.
func (w *work) delimiterRun(block text.Reader, line []byte, segment text.Segment) ast.Node {
	c := line[0]
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
	return end < stop && wikiInner(src[i+2:end])
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
