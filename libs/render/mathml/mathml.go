// Package mathml converts TeX math to MathML on the server, so that note pages show
// formulas without JavaScript.
//
// The conversion is KaTeX's (katex/katex.min.js, KaTeX 0.16.47, MIT-licensed: see
// katex/LICENSE) run in goja, a JavaScript engine written in Go. A pure-Go converter was
// not to be had: our module proxy refuses github.com/wyatt915/treeblood and its goldmark
// binding, as well as the goldmark extensions that wrap KaTeX or Temml
// (FurqanSoftware/goldmark-katex, filippo-agent/goldmark-mathml), and
// github.com/go-latex/latex, which it serves, draws TeX as images and writes no MathML.
// KaTeX is widely used and maintained, its trust setting turns off every command that
// could link or load anything, and its maxExpand setting stops macro bombs; the price
// is a load of KaTeX per runtime and a run many times slower than in a browser, which
// the pool and the bounds below keep in check.
//
// Compiling katex.min.js takes 0.15 to 0.2 s of CPU, once per process. Loading it into
// a runtime then takes 10 to 20 ms of CPU and keeps about 4 MiB. Runtimes are made on
// first use, at most one per CPU (GOMAXPROCS at start), and kept for reuse; one that was
// interrupted is dropped. A typical formula takes 1 to 10 ms of CPU: e^{i\pi}+1=0 about
// 1 ms, the quadratic formula 2 to 3 ms, a 3×3 matrix 5 to 9 ms.
//
// To update KaTeX, change katexVersion and the version in the go:generate line below,
// run go generate (it needs npm), and check the tests and the output of a few notes.
package mathml

//go:generate sh -c "npm pack --silent katex@0.16.47 >/dev/null && tar -xzf katex-0.16.47.tgz package/dist/katex.min.js package/LICENSE && mv package/dist/katex.min.js package/LICENSE katex/ && rm -r package katex-0.16.47.tgz"

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// Bounds of one formula.
const (
	maxTeX    = 8 << 10  // bytes of TeX; longer input is refused without running KaTeX
	maxMathML = 64 << 10 // bytes of MathML; typical formulas come out 5 to 15 times their TeX
)

// deadline bounds KaTeX's time on one formula, some 30 times a 3×3 matrix's. It is a
// variable for the tests, which may run under the race detector on a loaded machine.
var deadline = 250 * time.Millisecond

var (
	// ErrInvalid is a formula that KaTeX cannot parse. The error wrapping it ends with
	// KaTeX's message, such as "Undefined control sequence: \foo at position 1".
	ErrInvalid = errors.New("invalid TeX")
	// ErrTooLarge is a formula of more than 8 KiB of TeX, or of more than 64 KiB of MathML.
	ErrTooLarge = errors.New("formula too large")
	// ErrTooSlow is a formula that took KaTeX longer than 250 ms.
	ErrTooSlow = errors.New("formula too slow to render")
)

// Convert renders tex as MathML: display math as <math display="block">, inline as <math>.
// ctx cancels it; it is bounded in time and output size.
//
// The result is one <math> element of presentation MathML, without KaTeX's <semantics>
// and <annotation> copy of the source. It holds only MathML elements and attributes
// (checked here, since the caller inserts it unsanitized), and it is the same for the
// same input. Commands that would link or load (\href, \url, \includegraphics,
// \htmlClass…) come out as their name in red.
//
// A failure wraps ErrInvalid, ErrTooLarge or ErrTooSlow, or is ctx's error; any other
// error is a fault of KaTeX or of this package.
func Convert(ctx context.Context, tex string, display bool) (string, error) {
	if len(tex) > maxTeX {
		return "", fmt.Errorf("%w: %d bytes of TeX, the limit is %d", ErrTooLarge, len(tex), maxTeX)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	e, err := acquire(ctx)
	if err != nil {
		return "", err
	}
	markup, err := e.render(ctx, tex, display)
	release(e)
	if err != nil {
		return "", err
	}
	math, err := mathElement(markup)
	if err != nil {
		return "", err
	}
	if len(math) > maxMathML {
		return "", fmt.Errorf("%w: %d bytes of MathML, the limit is %d", ErrTooLarge, len(math), maxMathML)
	}
	if err := checkMarkup(math); err != nil {
		return "", err
	}
	return math, nil
}

// mathElement cuts the <math> element out of KaTeX's markup, which is
//
//	<span class="katex"><math xmlns="…"[ display="block"]><semantics>BODY<annotation encoding="application/x-tex">TEX</annotation></semantics></math></span>
//
// and returns <math …>BODY</math>. TEX is escaped, so the last <annotation is the tag.
func mathElement(markup string) (string, error) {
	const (
		open       = `<span class="katex"><math xmlns="http://www.w3.org/1998/Math/MathML"`
		semantics  = `<semantics>`
		annotation = `<annotation encoding="application/x-tex">`
		end        = `</annotation></semantics></math></span>`
	)
	s, ok1 := strings.CutPrefix(markup, open)
	s, ok2 := strings.CutSuffix(s, end)
	attrs, s, ok3 := strings.Cut(s, ">"+semantics)
	body, _, ok4 := cutLast(s, annotation)
	if !ok1 || !ok2 || !ok3 || !ok4 || (attrs != "" && attrs != ` display="block"`) {
		return "", fmt.Errorf("mathml: KaTeX's markup has an unexpected shape: %.80q", markup)
	}
	return `<math xmlns="http://www.w3.org/1998/Math/MathML"` + attrs + ">" + body + "</math>", nil
}

// cutLast is strings.Cut around the last instance of sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// Elements are the MathML elements Convert writes: those KaTeX's MathML builder writes
// with trust off (mglyph, for \includegraphics, needs trust). Tests of pages use them to
// tell its formulas from MathML that got past the sanitizer.
var Elements = []string{"math", "mrow", "mi", "mn", "mo", "mtext", "mspace", "mover", "munder",
	"munderover", "msup", "msub", "msubsup", "mfrac", "mroot", "msqrt", "mtable", "mtr",
	"mtd", "mlabeledtr", "menclose", "mstyle", "mpadded", "mphantom"}

// elements and attributes are the MathML that Convert lets out; the href attribute
// (\href) needs trust.
var (
	elements   = set(Elements...)
	attributes = set("xmlns", "display", "mathvariant", "mathcolor", "mathbackground",
		"mathsize", "fence", "stretchy", "separator", "lspace", "rspace", "minsize", "maxsize",
		"largeop", "movablelimits", "symmetric", "accent", "accentunder", "linethickness",
		"scriptlevel", "displaystyle", "width", "height", "depth", "voffset", "notation",
		"columnalign", "columnspacing", "columnlines", "rowalign", "rowspacing", "rowlines",
		"frame", "framespacing", "equalrows", "equalcolumns", "side", "valign", "linebreak",
		"style")
	// styleValue is the style KaTeX writes (\fcolorbox's border, \pmb's text shadow):
	// no parentheses, so no url() and no expression().
	styleValue = regexp.MustCompile(`^[a-zA-Z0-9 #.:;%-]*$`)
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// checkMarkup makes sure that math holds only the elements and attributes above, and
// text: a defense against a KaTeX bug, since the page's sanitizer does not see MathML.
func checkMarkup(math string) error {
	z := html.NewTokenizer(strings.NewReader(math))
	for {
		switch z.Next() {
		case html.ErrorToken:
			if errors.Is(z.Err(), io.EOF) {
				return nil
			}
			return fmt.Errorf("mathml: KaTeX's markup does not tokenize: %w", z.Err())
		case html.TextToken:
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			if !elements[string(name)] {
				return fmt.Errorf("mathml: KaTeX wrote a <%s> element", name)
			}
			for more {
				var key, val []byte
				key, val, more = z.TagAttr()
				if !attributes[string(key)] || bytes.Equal(key, []byte("style")) && !styleValue.Match(val) {
					return fmt.Errorf("mathml: KaTeX wrote a %s=%q attribute", key, val)
				}
			}
		default:
			return fmt.Errorf("mathml: KaTeX wrote %s", z.Token())
		}
	}
}
