package mathml

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

const mathOpen = `<math xmlns="http://www.w3.org/1998/Math/MathML"`

// checkShape fails t unless out is one <math> element of the right display, without
// KaTeX's wrapper and annotation.
func checkShape(t *testing.T, tex, out string, display bool) {
	t.Helper()
	open := mathOpen + ">"
	if display {
		open = mathOpen + ` display="block">`
	}
	if !strings.HasPrefix(out, open) || !strings.HasSuffix(out, "</math>") ||
		strings.Count(out, "<math") != 1 || strings.Count(out, "</math>") != 1 {
		t.Errorf("Convert(%q, %v) is not one <math> element: %s", tex, display, out)
	}
	for _, bad := range []string{"<annotation", "<semantics", "<span", "katex"} {
		if strings.Contains(out, bad) {
			t.Errorf("Convert(%q, %v) contains %q: %s", tex, display, bad, out)
		}
	}
}

// lenient gives KaTeX 10 s a formula for the rest of the test, which is not about time:
// under the race detector or on a loaded machine, typical formulas can take over 250 ms.
func lenient(t testing.TB) {
	d := deadline
	deadline = 10 * time.Second
	t.Cleanup(func() { deadline = d })
}

func TestConvert(t *testing.T) {
	lenient(t)
	for _, tc := range []struct {
		tex     string
		display bool
		want    []string
	}{
		{`e^{i\pi}+1=0`, false, []string{`<msup><mi>e</mi><mrow><mi>i</mi><mi>π</mi></mrow></msup>`, `<mo>+</mo><mn>1</mn><mo>=</mo><mn>0</mn>`}},
		{`e^{i\pi}+1=0`, true, []string{`<msup><mi>e</mi>`}},
		{`x = \frac{-b \pm \sqrt{b^2-4ac}}{2a}`, true, []string{`<mfrac>`, `<msqrt>`, `<mo>±</mo>`}},
		{`\begin{pmatrix}1&0&0\\0&1&0\\0&0&1\end{pmatrix}`, true, []string{`<mtable`, `<mtr>`, `<mtd>`, `<mo fence="true">(</mo>`}},
		{`\int_0^\infty e^{-x^2}\,dx = \sum_{n=1}^{N} \frac{1}{n}`, true, []string{`<msubsup><mo>∫</mo>`, `<mi mathvariant="normal">∞</mi>`, `<munderover><mo>∑</mo>`}},
		{`\text{if } x < y \text{ \& } a > b`, false, []string{"<mtext>if\u00a0</mtext>", `<mo>&lt;</mo>`, `<mo>&gt;</mo>`, "<mtext>\u00a0&amp;\u00a0</mtext>"}},
		{`\color{blue} x \fcolorbox{red}{white}{y}`, false, []string{`mathcolor="blue"`, `style="border: 0.04em solid red"`}},
		{`\mathbb{R} \to \mathcal{C}`, false, []string{`mathvariant="double-struck"`, `<mo>→</mo>`}},
		{`\rule{1000em}{1000em}`, false, []string{`width="20em" height="20em"`}},
		{``, false, []string{`<mrow></mrow>`}},
	} {
		out, err := Convert(context.Background(), tc.tex, tc.display)
		if err != nil {
			t.Errorf("Convert(%q, %v): %v", tc.tex, tc.display, err)
			continue
		}
		checkShape(t, tc.tex, out, tc.display)
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("Convert(%q, %v) lacks %s:\n%s", tc.tex, tc.display, w, out)
			}
		}
	}
}

// unsafe matches what must never be in a tag of the output: links, sources, event
// handlers, and style that loads.
var unsafe = regexp.MustCompile(`(?i)<[^>]*(\s(href|src|xlink:href|on[a-z]+)\s*=|url\()|<(script|img|a|iframe|svg|style)\b`)

func TestHostile(t *testing.T) {
	lenient(t)
	for _, tc := range []struct {
		tex     string
		want    string // a fragment of the output
		invalid bool   // ErrInvalid rather than output
	}{
		{tex: `\href{javascript:alert(1)}{x}`, want: `<mtext>\href</mtext>`},
		{tex: `\url{javascript:alert(1)}`, want: `<mtext>\url</mtext>`},
		{tex: `\htmlClass{x}{y}`, want: `<mtext>\htmlClass</mtext>`},
		{tex: `\htmlStyle{background:url(x)}{y}`, want: `<mtext>\htmlStyle</mtext>`},
		{tex: `\htmlData{onclick=alert(1)}{y}`, want: `<mtext>\htmlData</mtext>`},
		{tex: `\includegraphics{x.png}`, want: `<mtext>\includegraphics</mtext>`},
		{tex: `\style{color:red}{x}`, invalid: true},
		{tex: `</math><script>alert(1)</script>`, want: `<mo>&lt;</mo><mi mathvariant="normal">/</mi><mi>m</mi>`},
		{tex: `\text{<img src=x onerror=alert(1)>}`, want: "<mtext>&lt;img\u00a0src=x\u00a0onerror=alert(1)&gt;</mtext>"},
		{tex: `\text{</mtext><img src=x onerror=alert(1)>}`, want: `&lt;/mtext&gt;&lt;img`},
		{tex: `\verb|<script>alert(1)</script>|`, want: `&lt;script&gt;`},
		{tex: `\color{red;background:url(x)}x`, invalid: true},
		{tex: `\fcolorbox{url(x)}{red}{x}`, invalid: true},
		{tex: `\operatorname{"onmouseover="alert(1)}`, want: `&quot;`},
		{tex: `\mathrm{\&lt;script\&gt;}`, want: `&amp;`},
	} {
		for _, display := range []bool{false, true} {
			out, err := Convert(context.Background(), tc.tex, display)
			if tc.invalid {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("Convert(%q, %v) = %q, %v; want ErrInvalid", tc.tex, display, out, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("Convert(%q, %v): %v", tc.tex, display, err)
				continue
			}
			checkShape(t, tc.tex, out, display)
			if m := unsafe.FindString(out); m != "" {
				t.Errorf("Convert(%q, %v) has %q:\n%s", tc.tex, display, m, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("Convert(%q, %v) lacks %s:\n%s", tc.tex, display, tc.want, out)
			}
		}
	}
}

func TestInvalid(t *testing.T) {
	lenient(t)
	for _, tc := range []struct{ tex, msg string }{
		{`\frac{`, `invalid TeX: Unexpected end of input in a macro argument, expected '}' at position 7`},
		{`\foo`, `invalid TeX: Undefined control sequence: \foo at position 1`},
		{`x^1^2`, `invalid TeX: Double superscript at position 4`},
		{`\begin{matrix}`, `invalid TeX: Expected & or \\ or \cr or \end at position 15`},
	} {
		_, err := Convert(context.Background(), tc.tex, false)
		if !errors.Is(err, ErrInvalid) || err.Error() != tc.msg {
			t.Errorf("Convert(%q) error: %v; want %s", tc.tex, err, tc.msg)
		}
	}
}

// TestBounds runs formulas made to take much time or memory: each must fail fast. A
// formula stopped by KaTeX's own bounds may also miss the deadline on a slow machine.
func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		tex  string
		want []error // any of these
	}{
		{"input over 8 KiB", strings.Repeat("x", maxTeX+1), []error{ErrTooLarge}},
		{"def bomb", `\def\a{\b\b}\def\b{\c\c}\def\c{\d\d}\def\d{\e\e}\def\e{\f\f}\def\f{\g\g}\def\g{\h\h}\def\h{xx}` + strings.Repeat(`\a`, 50), []error{ErrInvalid, ErrTooSlow}},
		{"newcommand bomb", `\newcommand{\xa}{\xb\xb\xb\xb}\newcommand{\xb}{\xc\xc\xc\xc}\newcommand{\xc}{\xd\xd\xd\xd}\newcommand{\xd}{\xe\xe\xe\xe}\newcommand{\xe}{x}` + strings.Repeat(`\xa`, 20), []error{ErrInvalid, ErrTooSlow}},
		{"recursive macro", `\def\a{\a\a}\a`, []error{ErrInvalid, ErrTooSlow}},
		{"deep braces", strings.Repeat("{", 4000) + "x" + strings.Repeat("}", 4000), []error{nil, ErrTooSlow}},
		// Whether these finish within the deadline depends on the machine: on a fast one
		// they may (deep roots took 165 ms here), within the output cap.
		{"deep fractions", strings.Repeat(`\frac{1}{`, 800) + "x" + strings.Repeat("}", 800), []error{nil, ErrTooSlow, ErrTooLarge}},
		{"deep roots", strings.Repeat(`\sqrt{`, 1170) + "x" + strings.Repeat("}", 1170), []error{nil, ErrTooSlow, ErrTooLarge}},
		{"long sum", strings.Repeat(`x+`, 4000), []error{nil, ErrTooSlow, ErrTooLarge}},
	} {
		start := time.Now()
		out, err := Convert(context.Background(), tc.tex, true)
		elapsed := time.Since(start)
		ok := false
		for _, w := range tc.want {
			ok = ok || errors.Is(err, w) || w == nil && err == nil
		}
		if !ok || len(out) > maxMathML {
			t.Errorf("%s: %d bytes of MathML, error %v; want one of %v and at most %d bytes", tc.name, len(out), err, tc.want, maxMathML)
		}
		// The deadline plus the loading of a runtime, on a slow machine.
		if elapsed > 2*time.Second {
			t.Errorf("%s: took %v", tc.name, elapsed)
		}
		t.Logf("%s: %d bytes of TeX, %d of MathML, %v, %v", tc.name, len(tc.tex), len(out), elapsed.Round(time.Millisecond), err)
	}
}

func TestOutputCap(t *testing.T) {
	lenient(t)
	tex := `\def\v{\verb|` + strings.Repeat("x", 7000) + `|}` + strings.Repeat(`\v`, 10)
	if out, err := Convert(context.Background(), tex, false); !errors.Is(err, ErrTooLarge) {
		t.Errorf("10 times 7000 characters: %d bytes of MathML, error %v; want ErrTooLarge", len(out), err)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Convert(ctx, `x`, false); !errors.Is(err, context.Canceled) {
		t.Errorf("Convert with a cancelled context: %v", err)
	}

	if _, err := Convert(context.Background(), `x`, false); err != nil { // a runtime ready
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err := Convert(ctx, strings.Repeat(`x+`, 4000), false)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Convert cancelled after 20ms: %v", err)
	}
	t.Logf("cancelled after 20ms, returned after %v", time.Since(start))

	// The interrupted runtime is not reused.
	if out, err := Convert(context.Background(), `x`, false); err != nil || !strings.Contains(out, "<mi>x</mi>") {
		t.Errorf("Convert after a cancel: %q, %v", out, err)
	}
}

// TestConcurrent converts formulas on 8 goroutines at once, each result the same as
// alone: the runtimes of the pool give the same output.
func TestConcurrent(t *testing.T) {
	lenient(t)
	want := make(map[string]string)
	for _, f := range formulas {
		out, err := Convert(context.Background(), f.tex, f.display)
		if err != nil {
			t.Fatal(err)
		}
		want[f.name] = out
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2 * len(formulas) {
				f := formulas[(g+i)%len(formulas)]
				out, err := Convert(context.Background(), f.tex, f.display)
				if err != nil || out != want[f.name] {
					t.Errorf("goroutine %d, %s: %v\n%s\nwant\n%s", g, f.name, err, out, want[f.name])
				}
			}
		})
	}
	wg.Wait()
}

func TestKaTeXVersion(t *testing.T) {
	e, err := acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release(e)
	if v := e.vm.Get("katex").ToObject(e.vm).Get("version").String(); v != katexVersion {
		t.Errorf("katex.min.js is KaTeX %s, katexVersion says %s", v, katexVersion)
	}
}

func TestCheckMarkup(t *testing.T) {
	for _, m := range []string{
		mathOpen + `><mtext><img src=x onerror=alert(1)></mtext></math>`,
		mathOpen + `><mi href="javascript:alert(1)">x</mi></math>`,
		mathOpen + `><mi onclick="alert(1)">x</mi></math>`,
		mathOpen + `><mstyle style="background:url(x)">x</mstyle></math>`,
		mathOpen + `><mglyph src="x.png"></mglyph></math>`,
		mathOpen + `><!-- x --></math>`,
		mathOpen + `><mi><![CDATA[<script>]]></mi></math>`,
		mathOpen + `></script></math>`,
	} {
		if err := checkMarkup(m); err == nil {
			t.Errorf("checkMarkup passes %s", m)
		}
	}
	ok := mathOpen + ` display="block"><mstyle mathcolor="#cc0000" style="border: 0.04em solid red"><mtext>&lt;img&gt;</mtext></mstyle></math>`
	if err := checkMarkup(ok); err != nil {
		t.Errorf("checkMarkup(%s): %v", ok, err)
	}
}

func TestMathElement(t *testing.T) {
	for _, m := range []string{
		``,
		`<math>x</math>`,
		`<span class="katex">` + mathOpen + ` display="inline"><semantics><mi>x</mi><annotation encoding="application/x-tex">x</annotation></semantics></math></span>`,
		`<span class="katex">` + mathOpen + `><mi>x</mi></math></span>`,
	} {
		if out, err := mathElement(m); err == nil {
			t.Errorf("mathElement(%s) = %s", m, out)
		}
	}
}

// formulas are typical of notes, for TestConcurrent and the benchmarks.
var formulas = []struct {
	name    string
	tex     string
	display bool
}{
	{"euler", `e^{i\pi}+1=0`, false},
	{"quadratic", `x = \frac{-b \pm \sqrt{b^2-4ac}}{2a}`, true},
	{"matrix", `A = \begin{bmatrix} a_{11} & a_{12} & a_{13} \\ a_{21} & a_{22} & a_{23} \\ a_{31} & a_{32} & a_{33} \end{bmatrix}`, true},
	{"integral", `\int_0^\infty e^{-x^2}\,dx = \frac{\sqrt{\pi}}{2}, \quad \sum_{n=1}^{\infty} \frac{1}{n^2} = \frac{\pi^2}{6}`, true},
	{"inline", `\alpha_i \leq \beta^2`, false},
}

func BenchmarkConvert(b *testing.B) {
	lenient(b)
	for _, f := range formulas {
		b.Run(f.name, func(b *testing.B) {
			var out string
			var err error
			for b.Loop() {
				if out, err = Convert(context.Background(), f.tex, f.display); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(f.tex)), "TeX-bytes")
			b.ReportMetric(float64(len(out)), "MathML-bytes")
		})
	}
}

// BenchmarkLoad measures loading KaTeX into a new runtime, which the first conversions
// on each of the pool's runtimes pay; compiling the script is paid once per process.
func BenchmarkLoad(b *testing.B) {
	if _, err := program(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := newEngine(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleConvert() {
	out, err := Convert(context.Background(), `x^2`, false)
	fmt.Println(out, err)
	// Output: <math xmlns="http://www.w3.org/1998/Math/MathML"><mrow><msup><mi>x</mi><mn>2</mn></msup></mrow></math> <nil>
}
