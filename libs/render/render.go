// Package render turns a note's Markdown into the sanitized HTML of its page: CommonMark
// plus GFM tables, task lists, strikethrough and autolinks, footnotes, heading ids,
// highlighted code and Obsidian callouts. It runs when a note is written, not per view,
// within these bounds:
//
//   - Highlighting one fenced code block may take blockDeadline, and all the blocks of a
//     note together highlightBudget. A block that misses either is shown as plain text.
//   - The HTML is at most MaxHTML(len(src)) bytes. Over that, the code blocks whose
//     highlighting adds the most bytes are shown as plain text, then all of them, and
//     if the note is still too large it is shown whole as preformatted text, cut at the
//     cap.
//   - A table may have no more cells than its Markdown has bytes. GFM pads short rows
//     with empty cells, so a few kilobytes of pipes would otherwise parse into millions
//     of nodes. A larger table is shown as plain text.
//
// Each block shown as plain text for missing a bound is reported as a Fallback, so that
// the author can be told.
//
//   - A whole render may take noteDeadline. Its parse takes time linear in the length of
//     the note. goldmark's parser does work quadratic in the length of some constructed
//     inputs (64 KiB of nested block quotes took 2.9 s, 120 KiB of unclosed link
//     destinations 1.9 s), so bounds shows as plain text, and reports, what would start
//     that work: containers nested deeper than maxNesting, and the links, wikilinks,
//     footnote references, code spans, emphasis delimiters and link reference
//     definitions over their block's allowance of parse work (docs/rendering-bounds.md
//     has the shapes and the figures). The parser cannot be interrupted, and a linear
//     parse of the largest notes can still take seconds: a note that misses the
//     deadline is shown whole as preformatted text, while its parse runs to its end in
//     the background.
//   - Renders wait for one of a fixed number of slots per process, in a fair queue per
//     tenant (queue.go), and hold it until their parse has really ended, so runaway
//     parses never take more than that many goroutines. A render that cannot get a slot
//     within queueWait is shown as preformatted text too, and says so (MissBusy); one
//     that misses its deadline says so too (MissDeadline): the caller decides what to
//     store (libs/note keeps neither for good unless the note missed its own bound twice).
//
// Links between notes are not resolved here: a note's render depends on that note only.
// Each link to another note (Result.Links) is written as a pair of placeholders that
// ResolveLinks replaces by a link or a plain span when a page is built; a fragment of it
// is resolved by the Outline of the note it names (Result.Outline, Outline.Anchor).
// Links within the note are resolved here. Every id of the HTML starts with IDPrefix.
// References finds the links and embeds of a note as this package reads them.
//
// Markdown returns as soon as its context is done.
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/alecthomas/chroma/v2"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
)

// Version identifies the renderer's output. Bump it whenever the HTML for the same
// Markdown changes; stored renders of an older version are re-rendered lazily.
// 2: highlights, tags, foldable callouts.
// 3: math as MathML, callout icons and Markdown titles, wikilinks, image alt text kept,
// %%comments%% left out.
// 4: wikilinks as placeholders resolved when a page is built (ResolveLinks), without
// rel="nofollow" (they lead to the author's own notes); constructs over the parse bounds
// shown as their text (bounds.go).
// 5: Obsidian's heading anchors (every script) and block ids, all ids prefixed (IDPrefix),
// note links as written (Markdown links to .md files too), same-note links resolved,
// image sizes.
// 6: fragments match headings with ASCII punctuation read as space (the outline's keys),
// block ids right after an embed, images sized by an alt text that is a size, and a "]"
// that makes no link keeps the text after it.
// 7: block ids are ^id, as Obsidian's links name them; a Markdown link to a relative
// path without an attachment's extension ([x](Folder/Note)) is a note link.
// 8: Obsidian's reading view: a single line break is a line break; tasks of any
// character, with data-task; inline footnotes ^[…] numbered with the others; a note's raw
// HTML kept, sanitized (allowlisted elements, attributes and style properties; dropped
// elements with their content; no id, class, role or data-* from a note) and balanced;
// YouTube and Vimeo links and iframes as players, other iframes and web pages embedded as
// images as links; Mermaid fences as <pre class="mermaid"> drawn in the browser; embeds of
// notes (links keep Embed, an embed alone in its paragraph has no <p>, and the outline
// records the byte spans of top-level heading sections and of blocks that a page cuts).
// 9: a note's text-decoration keeps keywords and a colour only, never a length (a thick
// overline painted over the page's header); renders of 8 that had one are redone.
const Version = 9

// Fallback is a block shown as escaped preformatted text because it missed a bound.
type Fallback struct {
	Ref    string // the block's first line (trimmed, at most 80 characters), pointing the author to the spot
	Reason string // one short human sentence: e.g. "highlighting took too long", "output too large"
}

// Options are what a note's render depends on besides its Markdown.
type Options struct {
	// Tenant names whose render it is (an account), for the fair queue of renders.
	Tenant string
	// Parsed, when set, is called with the note's links (Result.Links) once the note is
	// parsed, before its HTML is made, so that the caller can look them up meanwhile. It
	// must not block. It is not called for a note not parsed in time, and may be called
	// after Markdown returned, for one that missed noteDeadline.
	Parsed func([]Link)
}

// Miss says whether a note was shown whole as text for a reason that may pass.
type Miss int

const (
	// MissNone: the render is what the note makes.
	MissNone Miss = iota
	// MissBusy: no render slot came free within queueWait, because of other work.
	MissBusy
	// MissDeadline: the render had its slot but missed noteDeadline.
	MissDeadline
)

// Result is a rendered note.
type Result struct {
	HTML []byte // sanitized HTML of the note body, with link placeholders (see ResolveLinks)
	// Fallbacks lists the blocks shown as plain text, in document order, each distinct
	// reference and reason once and at most maxFallbacks of them.
	Fallbacks []Fallback
	// Links are the note links whose placeholders HTML holds, by index, and Nonce the
	// placeholders' nonce; both empty when the note was shown whole as text.
	Links []Link
	Nonce string
	// Outline is the note's headings and block ids, for the links into it (see
	// Outline.Anchor); empty when the note was shown whole as text.
	Outline Outline
	// Miss is why the note was shown whole as text, when the reason may pass.
	Miss Miss
	// References are the note's references as References finds them, from the render's
	// own parse; nil when the note has none, or was not parsed (MissBusy, MissDeadline).
	References []Reference
}

// Reasons of fallbacks.
const (
	reasonSlow   = "highlighting took too long"
	reasonBudget = "the note's time for highlighting ran out"
	reasonLarge  = "output too large"
	reasonTable  = "table has too many empty cells"
	reasonFailed = "highlighting failed"
	// The whole note is preformatted text for these two.
	reasonDeadline = "the note took too long to render"
	reasonBusy     = "the renderer was busy with other notes for too long"
)

// maxFallbacks caps the fallbacks reported for one note: a note made of thousands of
// blocks that miss their bounds gets a readable list, not thousands of warnings.
const maxFallbacks = 100

// MaxHTML is the output cap for a source of n bytes: 4*n + 64 KiB.
func MaxHTML(n int) int {
	return 4*n + 64<<10
}

// markdown is goldmark with the extensions of a note. Raw HTML in a note is rendered by
// rawHTML (goldmark is not in unsafe mode), and whatever it renders is sanitized by
// policy, then balanced when it kept some of the note's HTML (see pass). Every node
// renderer checks the pass's sink first (see guarded), fenced code is highlighted within
// bounds (see codeBlocks) and tables are bounded (see tables).
var markdown = goldmark.New(
	goldmark.WithRenderer(newRenderer()),
	// A line break inside a paragraph is a line break, as in Obsidian's reading view
	// with its default settings ("strict line breaks" off).
	goldmark.WithRendererOptions(gmhtml.WithHardWraps()),
	goldmark.WithExtensions(
		bounds{},
		tables{},
		extension.Strikethrough,
		autolinks{},
		tasks{},
		footnotes{},
		codeBlocks{},
		callouts{},
		highlights{},
		tags{},
		wikilinks{},
		maths{},
		comments{},
		outlines{},
		rawHTML{},
		players{},
	),
)

// policy is the allowlist every rendered note passes through, but for its highlighted
// code (sink.highlighted) and generated markup (generate): what a note's HTML may keep
// (notePolicy) plus exactly the attributes our Markdown features produce.
var policy = func() *bluemonday.Policy {
	p := notePolicy()
	token := regexp.MustCompile(`^[A-Za-z0-9_:. -]+$`)
	p.AllowElements("mark", "details", "summary")
	p.AllowAttrs("class").Matching(token).OnElements("pre", "code", "span", "div", "p", "a", "sup", "ol", "li", "hr", "details", "summary")
	p.AllowAttrs("open").Matching(regexp.MustCompile(`^(open)?$`)).OnElements("details")
	// The ids the renderer gives (see IDPrefix): heading anchors, footnotes, block ids.
	p.AllowAttrs("id").Matching(regexp.MustCompile(`^(`+IDPrefix+`[\p{L}\p{M}\p{N}_:^-]+|\^[A-Za-z0-9-]+)$`)).
		OnElements("h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "ul", "ol", "blockquote", "table", "div", "details", "sup")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$`)).OnElements("input")
	// A done task's character (see taskChar).
	p.AllowAttrs("data-task").Matching(regexp.MustCompile(`^[\pL\pN\pP\pS]$`)).OnElements("li")
	p.AllowAttrs("role").Matching(regexp.MustCompile(`^doc-[a-z]+$`)).OnElements("a", "div", "sup")
	// Any alt text: UGCPolicy's pattern drops the whole alt of "Figure 1: results" or of
	// one with a formula or a tag; the sanitizer escapes it, and it is never a URL.
	p.AllowAttrs("alt").OnElements("img")
	return p
}()

// sanitize is policy.SanitizeBytes with the output's buffer sized once: sanitized HTML is
// about as long as its input (bluemonday's own buffer grows from nothing by doubling).
func sanitize(in []byte) []byte {
	if len(bytes.TrimSpace(in)) == 0 {
		return in
	}
	out := bytes.NewBuffer(make([]byte, 0, len(in)+len(in)/8))
	if err := policy.SanitizeReaderToWriter(bytes.NewReader(in), out); err != nil {
		return nil // as SanitizeBytes: malformed beyond repair, nothing
	}
	return out.Bytes()
}

// noteDeadline bounds one render, from the call to the result.
const noteDeadline = 3 * time.Second

// Markdown renders src to sanitized HTML within the bounds of the package documentation.
// It returns ctx.Err() promptly when ctx is cancelled.
func Markdown(ctx context.Context, src string, opts Options) (Result, error) {
	release, err := slots.acquire(ctx, opts.Tenant, queueWait)
	if err != nil {
		return Result{}, err
	}
	if release == nil {
		res := whole(src, reasonBusy)
		res.Miss = MissBusy
		return res, nil
	}
	type outcome struct {
		res Result
		err error
	}
	// The render runs in its own goroutine because goldmark's parser cannot be
	// interrupted; everything after the parse stops soon after rctx is done. The
	// goroutine keeps its slot until it has really finished.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		defer release()
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: fmt.Errorf("render markdown: panic: %v", p)}
			}
		}()
		res, err := render(rctx, src, opts.Parsed)
		done <- outcome{res, err}
	}()
	deadline := time.NewTimer(noteDeadline)
	defer deadline.Stop()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	case <-deadline.C:
		res := whole(src, reasonDeadline)
		res.Miss = MissDeadline
		return res, nil
	}
}

// render parses src once and renders it in up to three passes, each giving up more
// highlighting, until the sanitized HTML fits the cap; failing that the note is shown
// whole as preformatted text.
func render(ctx context.Context, src string, parsed func([]Link)) (Result, error) {
	source := []byte(src)
	pc := parser.NewContext()
	doc := markdown.Parser().Parse(text.NewReader(source), parser.WithContext(pc))
	r := &run{ctx: ctx, max: MaxHTML(len(source)), budget: highlightBudget, code: map[*ast.FencedCodeBlock]*codeOutcome{},
		lexers: map[string]chroma.Lexer{}, nonce: newNonce()}
	r.links = collectLinks(doc)
	if parsed != nil && len(r.links) > 0 {
		parsed(r.links)
	}
	var refs []Reference
	if bytes.IndexByte(source, '[') >= 0 {
		refs = referencesIn(doc, source, pc)
	}
	r.spans = newSpanIndex(outlineOf(pc))

	p, err := r.pass(source, doc, nil, false)
	if err == nil && len(p.HTML) > r.max {
		// Every block has been rendered, so the bytes each block's highlighting adds
		// are known: give up the most expensive highlighting first.
		if shed := r.shed(len(p.HTML) - r.max); len(shed) < r.highlighted() {
			p, err = r.pass(source, doc, shed, false)
		}
	}
	if (errors.Is(err, errTooLarge) || err == nil && len(p.HTML) > r.max) && r.highlighted() > 0 {
		p, err = r.pass(source, doc, nil, true)
	}
	switch {
	case err == nil && len(p.HTML) <= r.max:
		last := r.last
		failed := r.convertMath(&last.gen)
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		var left []Fallback
		p.HTML, left = insert(p.HTML, last.gen.allowance(len(source)), last.gen)
		for _, f := range append(failed, left...) {
			last.fallback(f.Ref, f.Reason)
		}
		p.Outline = *outlineOf(pc)
		p.HTML = measureSpans(p.HTML, r.nonce, &p.Outline, r.spans)
		p.Fallbacks, p.Links, p.References = last.fallbacks, r.links, refs
		if len(r.links) > 0 {
			p.Nonce = r.nonce
		}
		return p, nil
	case err != nil && !errors.Is(err, errTooLarge):
		return Result{}, err
	}
	res := whole(src, reasonLarge)
	res.References = refs
	return res, nil
}

// errTooLarge stops a pass whose output exceeds its cap.
var errTooLarge = errors.New("render: output too large")

// run is the state of one Markdown call that its passes share.
type run struct {
	ctx    context.Context
	max    int           // the cap of the sanitized HTML
	budget time.Duration // highlighting time the note has left
	// code holds the outcome of highlighting each block, so that a later pass does not
	// highlight it again.
	code map[*ast.FencedCodeBlock]*codeOutcome
	// lexers are the lexers of the languages looked up, nil for a language chroma does
	// not know.
	lexers map[string]chroma.Lexer
	// links are the note links of the document (each link node knows its index).
	links []Link
	nonce string    // of the placeholders of generated markup and links
	spans spanIndex // the elements whose spans the outline gets (spans.go)
	last  *sink     // the last pass: its generated markup and fallbacks
}

// pass renders doc once, showing as plain text the code blocks in plain, or all of them
// when allPlain. The unsanitized HTML may take twice the cap, since sanitizing can shrink
// it (it drops what it does not allow) as well as grow it (it escapes quotes and adds
// rel="nofollow" to links). Only a pass that kept some of the note's own HTML needs
// balancing: the renderer's own markup is balanced.
func (r *run) pass(source []byte, doc ast.Node, plain map[*ast.FencedCodeBlock]bool, allPlain bool) (Result, error) {
	// HTML is commonly one and a half times its Markdown: one allocation, not a dozen growths.
	s := &sink{run: r, buf: make([]byte, 0, min(len(source)*3/2, 2*r.max)), limit: 2 * r.max, plain: plain, allPlain: allPlain, seen: map[Fallback]bool{},
		gen: placeholders{open: placeholderOpen, nonce: r.nonce}, highlighted: placeholders{open: placeholderCode, nonce: r.nonce}}
	if err := markdown.Renderer().Render(s, source, doc); err != nil {
		return Result{}, err
	}
	html := sanitize(s.buf)
	if s.raw {
		html = balance(html)
	}
	// Highlighted code counts toward the cap like the rest of the pass: it is
	// inserted whole.
	html, _ = insert(html, math.MaxInt, s.highlighted)
	if err := r.ctx.Err(); err != nil {
		return Result{}, err
	}
	r.last = s
	return Result{HTML: html, Fallbacks: s.fallbacks}, nil
}

// nodesOf returns the nodes of type T in doc, in document order, collected before a
// transformer changes the tree.
func nodesOf[T ast.Node](doc ast.Node) []T {
	var nodes []T
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := n.(T); ok && entering {
			nodes = append(nodes, t)
		}
		return ast.WalkContinue, nil
	})
	return nodes
}
