package render

import (
	"bytes"
	"context"
	"errors"
	"html"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/sharenote/sharenote/libs/render/mathml"
)

// maths is the goldmark extension for Obsidian's math, rendered as MathML by
// libs/render/mathml: `$…$` inline, `$$…$$` on one line and blocks between lines that
// start with `$$` as display math. As in Pandoc and Obsidian, an inline `$` opens math
// only before a non-space and closes it only after one, and not before a digit, so
// that "$5 and $10" stays text. Code spans and blocks are parsed first.
//
// MathML is generated markup (see generate): a formula is converted after the note's
// HTML is sanitized, within the time mathBudget for all of a note's formulas; one that
// fails, or comes too late or too large, shows as its TeX source and is reported.
type maths struct{}

// mathBudget bounds the time a note's formulas take to convert. A typical formula takes
// 1 to 10 ms, so a note of a few hundred formulas fits.
const mathBudget = 1500 * time.Millisecond

// reasonMathBudget is the fallback of a formula that came after mathBudget.
const reasonMathBudget = "the note's time for math ran out"

var kindMath = ast.NewNodeKind("Math")

// mathNode is a formula, inline or a display block.
type mathNode struct {
	ast.BaseInline
	TeX     string
	Display bool
	Source  string // the formula as written, delimiters included
}

func (n *mathNode) Kind() ast.NodeKind { return kindMath }

func (n *mathNode) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"TeX": n.TeX}, nil)
}

// kindMathBlock is the kind of a display formula between `$$` lines, a rawBlock whose
// lines are the TeX.
var kindMathBlock = ast.NewNodeKind("MathBlock")

func (maths) Extend(m goldmark.Markdown) {
	addInlineAndBlock(m, mathInline{}, mathBlock{}, 90, maths{}, 150)
}

type mathInline struct{}

func (mathInline) Trigger() []byte { return []byte{'$'} }

func (mathInline) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, segment := block.PeekLine()
	if bytes.HasPrefix(line, []byte("$$")) {
		end := bytes.Index(line[2:], []byte("$$"))
		if end <= 0 {
			return nil
		}
		n := &mathNode{TeX: string(line[2 : 2+end]), Display: true, Source: string(line[:end+4])}
		block.Advance(end + 4)
		return withText(n, n.Source)
	}
	if len(line) < 3 || isSpace(line[1]) {
		return nil
	}
	scanned := scannedMath(pc, segment)
	for i := 2; i < len(line); i++ {
		if scanned.visit(segment.Start + i) {
			return nil // an earlier scan went on from here and found no closing `$`
		}
		switch line[i] {
		case '\\':
			i++ // an escaped character, such as \$
		case '$':
			if isSpace(line[i-1]) || i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9' {
				continue
			}
			n := &mathNode{TeX: string(line[1:i]), Source: string(line[:i+1])}
			block.Advance(i + 1)
			return withText(n, n.Source)
		}
	}
	return nil
}

var mathScanKey = parser.NewContextKey()

// mathScan remembers the positions of a line that scans for an inline formula's closing
// `$` have been at, so that a line of many `$` that close nothing (" $a $a $a…") is
// scanned once rather than once for each. A scan that comes to a position an earlier
// one has been at would go on as that one did; and since a scan that found its `$` is
// followed by the parse from after that `$`, only a scan that found none can have been
// at a position a later scan comes to.
type mathScan struct {
	start, stop int    // of the line in the source, from the first scan
	been        []bool // by position from start
}

// scannedMath is the mathScan of the line of segment (from where the parse is to the
// line's end).
func scannedMath(pc parser.Context, segment text.Segment) *mathScan {
	if m, ok := pc.Get(mathScanKey).(*mathScan); ok && m.stop == segment.Stop && m.start <= segment.Start {
		return m
	}
	m := &mathScan{start: segment.Start, stop: segment.Stop, been: make([]bool, segment.Len())}
	pc.Set(mathScanKey, m)
	return m
}

// visit reports whether a scan has been at position i, and notes that one is.
func (m *mathScan) visit(i int) bool {
	been := m.been[i-m.start]
	m.been[i-m.start] = true
	return been
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// mathBlock parses display math between lines that start with `$$` (after at most
// three spaces): the TeX may follow the opening `$$` and precede the closing one. An
// opening `$$` without a closing one later in the note is not math.
type mathBlock struct{ interruptingBlock }

func (mathBlock) Trigger() []byte { return []byte{'$'} }

func (mathBlock) Open(_ ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, segment := reader.PeekLine()
	pos := pc.BlockOffset()
	if pos < 0 || pos > 3 || !bytes.HasPrefix(line[pos:], []byte("$$")) {
		return nil, parser.NoChildren
	}
	start := pos + 2
	rest := line[start:]
	if bytes.Contains(rest, []byte("$$")) {
		// `$$ x $$` on one line is inline display math in a paragraph.
		return nil, parser.NoChildren
	}
	if !bytes.Contains(reader.Source()[segment.Start+start:], []byte("$$")) {
		return nil, parser.NoChildren
	}
	node := &rawBlock{kind: kindMathBlock}
	if len(util.TrimRightSpace(util.TrimLeftSpace(rest))) > 0 {
		node.Lines().Append(text.NewSegment(segment.Start+start, segment.Stop))
	}
	reader.Advance(segment.Len() - 1)
	return node, parser.NoChildren
}

func (mathBlock) Continue(node ast.Node, reader text.Reader, _ parser.Context) parser.State {
	line, segment := reader.PeekLine()
	if line == nil {
		return parser.Close
	}
	if i := bytes.Index(line, []byte("$$")); i >= 0 {
		if i > 0 {
			node.Lines().Append(text.NewSegment(segment.Start, segment.Start+i))
		}
		reader.Advance(segment.Len() - 1)
		return parser.Close
	}
	node.Lines().Append(segment)
	reader.Advance(segment.Len() - 1)
	return parser.Continue | parser.NoChildren
}

func (maths) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindMath, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			m := n.(*mathNode)
			w.(*sink).math(m.TeX, m.Source, m.Display)
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(kindMathBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var tex bytes.Buffer
		lines := n.Lines()
		for i := range lines.Len() {
			s := lines.At(i)
			tex.Write(s.Value(source))
		}
		_, _ = w.WriteString(`<div class="math-block">`)
		w.(*sink).math(tex.String(), "$$"+tex.String()+"$$", true)
		_, _ = w.WriteString("</div>\n")
		return ast.WalkContinue, nil
	})
}

// math writes the placeholder of a formula; until it is converted (convertMath), it
// stands for its source as escaped code.
func (s *sink) math(tex, source string, display bool) {
	s.generate(item{tex: tex, display: display, source: len(source), ref: firstLine(source),
		without: `<code class="math-source">` + html.EscapeString(source) + `</code>`})
}

// convertMath converts the formulas of gen to MathML, each distinct one once, within
// mathBudget; those it cannot convert keep their source and are reported.
func (r *run) convertMath(gen *placeholders) []Fallback {
	var fallbacks []Fallback
	type key struct {
		tex     string
		display bool
	}
	done := map[key]string{}
	deadline := time.Now().Add(mathBudget)
	for i := range gen.items {
		it := &gen.items[i]
		if it.tex == "" {
			continue
		}
		k := key{it.tex, it.display}
		markup, ok := done[k]
		if !ok {
			var reason string
			markup, reason = r.convertFormula(it.tex, it.display, deadline)
			if reason != "" {
				fallbacks = append(fallbacks, Fallback{Ref: it.ref, Reason: reason})
			}
			done[k] = markup
		}
		it.markup = markup
	}
	return fallbacks
}

// convertFormula is the MathML of one formula, or "" and why there is none.
func (r *run) convertFormula(tex string, display bool, deadline time.Time) (string, string) {
	if time.Now().After(deadline) {
		return "", reasonMathBudget
	}
	ctx, cancel := context.WithDeadline(r.ctx, deadline)
	defer cancel()
	markup, err := mathml.Convert(ctx, tex, display)
	switch {
	case err == nil:
		return markup, ""
	case errors.Is(err, mathml.ErrInvalid):
		return "", "the math is not valid TeX: " + strings.TrimPrefix(err.Error(), mathml.ErrInvalid.Error()+": ")
	case errors.Is(err, mathml.ErrTooLarge):
		return "", reasonLarge
	case errors.Is(err, context.DeadlineExceeded) && r.ctx.Err() == nil:
		return "", reasonMathBudget
	case errors.Is(err, mathml.ErrTooSlow):
		return "", "the math took too long"
	default:
		return "", "the math could not be rendered"
	}
}
