package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// CodeClassPrefix namespaces the highlighter's CSS classes; the page's stylesheet for
// highlighted code is generated with the same prefix.
const CodeClassPrefix = "hl-"

// The time bounds of highlighting. chroma's lexers are regular expressions run by a
// backtracking engine (regexp2), and for some languages a few kilobytes of code make
// them backtrack for seconds: 32 KB of Groovy or Ceylon made of short lines ("a\n")
// took about 40 s, since each line start scans the rest of the block. And chroma lets a
// single match backtrack for up to 250 ms before it counts it as failed, so one step of
// a lexer can take that long (43 bytes of Groovy took a third of a second). Ordinary
// code highlights at roughly 0.7 to 4 MB/s (chroma's corpus of Go, C++, TypeScript,
// Java, YAML…, lexing and HTML; see tokenise), so blockDeadline lets a block of about 70
// to 400 KB through, and highlightBudget keeps a note with many blocks from spending
// more than half a second of the write that renders it.
const (
	blockDeadline   = 100 * time.Millisecond
	highlightBudget = 500 * time.Millisecond
)

// codeBlocks is the goldmark extension that renders fenced code: highlighted when its
// language is known and the bounds allow, else plain. Attributes in the info string,
// such as {linenos=true hl_lines=[1-9999]}, are ignored: only the language counts, so
// that a few bytes of fence cannot multiply the size of a block's HTML.
type codeBlocks struct{}

func (codeBlocks) Extend(m goldmark.Markdown) {
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(codeBlocks{}, 200)))
}

func (codeBlocks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, renderFencedCode)
}

// codeOutcome is what became of highlighting one block.
type codeOutcome struct {
	html   []byte // the highlighted block; nil when it is shown as plain text
	reason string // why it is shown as plain text
	plain  int    // about the size of the block shown as plain text, once sanitized
}

func renderFencedCode(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	s := w.(*sink)
	n := node.(*ast.FencedCodeBlock)
	language := n.Language(source)
	if string(language) == mermaidLanguage {
		writeDiagram(s, source, n)
		return ast.WalkContinue, nil
	}
	var lexer chroma.Lexer
	if language != nil {
		lexer = s.lexer(string(language))
	}
	if lexer != nil {
		if err := s.highlight(n, source, lexer); err != nil {
			return ast.WalkStop, err
		}
		switch c := s.code[n]; {
		case c.html == nil:
			s.fallback(codeRef(source, n), c.reason)
		case s.allPlain || s.plain[n]:
			s.fallback(codeRef(source, n), reasonLarge)
		default:
			// Held out of the sanitizer's way (see sink.highlighted), counted all the same.
			if s.room(len(c.html)) {
				s.held += len(c.html)
				s.highlighted.write(s, item{markup: string(c.html)})
			}
			return ast.WalkContinue, nil
		}
	}
	// This is goldmark's own rendering of fenced code.
	_, _ = s.WriteString("<pre><code")
	if language != nil {
		_, _ = s.WriteString(` class="language-`)
		gmhtml.DefaultWriter.Write(s, language)
		_ = s.WriteByte('"')
	}
	_ = s.WriteByte('>')
	for i := range n.Lines().Len() {
		line := n.Lines().At(i)
		gmhtml.DefaultWriter.RawWrite(s, line.Value(source))
	}
	_, _ = s.WriteString("</code></pre>\n")
	return ast.WalkContinue, nil
}

// mermaidLanguage is the info string of a Mermaid diagram's fence, as Obsidian reads it.
const mermaidLanguage = "mermaid"

// DiagramMarker opens each Mermaid diagram in the HTML: a block whose text is the
// diagram's source, shown as preformatted text until a script of the page draws it (see
// HasDiagram).
const DiagramMarker = `<pre class="mermaid">`

// writeDiagram writes Mermaid block n as DiagramMarker and its escaped source: the page
// draws it in the reader's browser, so the render keeps it as text, not highlighted.
func writeDiagram(s *sink, source []byte, n *ast.FencedCodeBlock) {
	_, _ = s.WriteString(DiagramMarker)
	for i := range n.Lines().Len() {
		line := n.Lines().At(i)
		gmhtml.DefaultWriter.RawWrite(s, line.Value(source))
	}
	_, _ = s.WriteString("</pre>\n")
}

// HasDiagram reports whether a note's HTML holds a Mermaid diagram, so that its page loads
// the scripts that draw it and only then.
func HasDiagram(html []byte) bool {
	return bytes.Contains(html, []byte(DiagramMarker))
}

// Looking up a language chroma does not know by name matches it against the file
// patterns of all its lexers: about a millisecond, tens under load. So lookups are kept
// for the process (up to maxCachedLanguages names), and a note may look up at most
// maxLanguages names that the process has not kept; blocks in further languages are
// plain, as unknown languages are.
const (
	maxLanguages       = 64
	maxCachedLanguages = 4096
)

// languages are the lexers looked up by language name, nil for none.
var languages = struct {
	sync.Mutex
	lexers map[string]chroma.Lexer
}{lexers: map[string]chroma.Lexer{}}

// lexer is the lexer of a language, or nil for none.
func (s *sink) lexer(language string) chroma.Lexer {
	if lexer, ok := s.lexers[language]; ok {
		return lexer
	}
	languages.Lock()
	lexer, ok := languages.lexers[language]
	languages.Unlock()
	if !ok && len(s.lexers) < maxLanguages {
		lexer = lexers.Get(language)
		languages.Lock()
		if len(languages.lexers) < maxCachedLanguages {
			languages.lexers[language] = lexer
		}
		languages.Unlock()
	}
	s.lexers[language] = lexer
	return lexer
}

// highlight highlights block n with lexer unless an earlier pass did or the pass shows
// all code as plain text, and records the outcome. It fails only with the context's
// error.
func (s *sink) highlight(n *ast.FencedCodeBlock, source []byte, lexer chroma.Lexer) error {
	if _, ok := s.code[n]; ok {
		return nil
	}
	if s.allPlain {
		s.code[n] = &codeOutcome{reason: reasonLarge}
		return nil
	}
	var b strings.Builder
	for i := range n.Lines().Len() {
		line := n.Lines().At(i)
		b.Write(line.Value(source))
	}
	code := b.String()
	c := &codeOutcome{plain: len(`<pre><code class="language-">`) + len(n.Language(source)) + len(html.EscapeString(code)) + len("</code></pre>\n")}
	s.code[n] = c
	d, reason := blockDeadline, reasonSlow
	if s.budget < d {
		d, reason = s.budget, reasonBudget
	}
	if d <= 0 {
		c.reason = reason
		return nil
	}
	start := time.Now()
	out, err := highlight(s.ctx, lexer, code, d, s.max)
	s.budget -= time.Since(start)
	switch {
	case err == nil:
		c.html = out
	case errors.Is(err, errSlow):
		c.reason = reason
	case errors.Is(err, errTooLarge):
		c.reason = reasonLarge
	case s.ctx.Err() != nil:
		s.err = s.ctx.Err()
		return s.err
	default:
		c.reason = reasonFailed
	}
	return nil
}

// errSlow ends highlighting that missed its deadline.
var errSlow = errors.New("render: highlighting took too long")

// highlight formats code with lexer within d and limit bytes. It fails with errSlow after
// d, with errTooLarge when the HTML would exceed limit bytes, and with ctx's error once ctx
// is done. The lexer runs in a goroutine of its own, because one step of it (one
// regular expression match) cannot be interrupted and may take hundreds of
// milliseconds; a lexer given up on stops at its next token.
func highlight(ctx context.Context, lexer chroma.Lexer, code string, d time.Duration, limit int) ([]byte, error) {
	type highlighted struct {
		html []byte
		err  error
	}
	var stop atomic.Bool
	done := make(chan highlighted, 1)
	go func() {
		defer func() {
			// A lexer that panics on odd input must not take the process down.
			if p := recover(); p != nil {
				done <- highlighted{err: fmt.Errorf("highlight: panic: %v", p)}
			}
		}()
		it, err := chroma.Coalesce(stoppable{lexer, &stop}).Tokenise(nil, code)
		if err != nil {
			done <- highlighted{err: err}
			return
		}
		w := &capped{limit: limit}
		if err := writeHighlighted(w, it); err != nil {
			done <- highlighted{err: err}
			return
		}
		done <- highlighted{html: w.buf}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case h := <-done:
		return h.html, h.err
	case <-timer.C:
		stop.Store(true)
		return nil, errSlow
	case <-ctx.Done():
		stop.Store(true)
		return nil, ctx.Err()
	}
}

// stoppable is a lexer whose tokens end once stop is set.
type stoppable struct {
	chroma.Lexer
	stop *atomic.Bool
}

func (l stoppable) Tokenise(options *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	it, err := tokenise(l.Lexer, text)
	if err != nil {
		return nil, err
	}
	return func() chroma.Token {
		if l.stop.Load() {
			return chroma.EOF
		}
		return it()
	}, nil
}

// capped keeps what is written to it up to limit bytes; past that it keeps nothing and
// remembers errTooLarge.
type capped struct {
	buf   []byte
	limit int
	err   error
}

func (c *capped) writeString(s string) {
	if c.err == nil && len(c.buf)+len(s) > c.limit {
		c.err, c.buf = errTooLarge, nil
	}
	if c.err == nil {
		c.buf = append(c.buf, s...)
	}
}

// codeRef points the author to code block n: its first line of code that is not blank,
// else its opening fence (the block has an info string, or it would not be highlighted).
func codeRef(source []byte, n *ast.FencedCodeBlock) string {
	for i := range n.Lines().Len() {
		line := n.Lines().At(i)
		if v := bytes.TrimSpace(line.Value(source)); len(v) > 0 {
			return firstLine(string(v))
		}
	}
	start := n.Info.Segment.Start
	for start > 0 && source[start-1] != '\n' {
		start--
	}
	return firstLine(string(source[start:n.Info.Segment.Stop]))
}

// shed picks highlighted blocks to show as plain text so that the HTML shrinks by at
// least excess bytes, those whose highlighting adds the most bytes first.
func (r *run) shed(excess int) map[*ast.FencedCodeBlock]bool {
	type cost struct {
		n     *ast.FencedCodeBlock
		extra int
	}
	var costs []cost
	for n, c := range r.code {
		if c.html != nil {
			costs = append(costs, cost{n, len(c.html) - c.plain})
		}
	}
	sort.Slice(costs, func(i, j int) bool {
		if costs[i].extra != costs[j].extra {
			return costs[i].extra > costs[j].extra
		}
		return costs[i].n.Info.Segment.Start < costs[j].n.Info.Segment.Start
	})
	plain := map[*ast.FencedCodeBlock]bool{}
	for _, c := range costs {
		if excess <= 0 {
			break
		}
		plain[c.n] = true
		excess -= c.extra
	}
	return plain
}

// highlighted counts the blocks that have been highlighted.
func (r *run) highlighted() int {
	n := 0
	for _, c := range r.code {
		if c.html != nil {
			n++
		}
	}
	return n
}
