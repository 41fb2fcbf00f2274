package render_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/render"
)

// A render leaves its wikilinks as placeholders, so that it depends on the note alone;
// ResolveLinks makes them links (or text) when a page is built.
func TestWikilinksResolveWhenThePageIsBuilt(t *testing.T) {
	src := "[[Found]], [[Found|again]], [[Found#Part Two]], [[ Lost ]] and `[[Code]]`.\n"
	res := markdown(t, src)
	want := []render.Link{{Target: "Found"}, {Target: "Found", Fragment: "Part Two"}, {Target: "Lost"}}
	if !slices.Equal(res.Links, want) || res.Nonce == "" {
		t.Fatalf("links %+v nonce %q, want %+v", res.Links, res.Nonce, want)
	}
	if strings.Contains(string(res.HTML), "<a") || strings.Contains(string(res.HTML), "Found</") {
		t.Errorf("the render resolved links itself:\n%s", res.HTML)
	}
	// The caller gives whole hrefs, the fragment's anchor included.
	html := render.ResolveLinks(string(res.HTML), res.Nonce, res.Links, []string{`https://share.example/s/abc?x="y"`, `https://share.example/s/abc?x="y"#n-part-two`, ""})
	for _, want := range []string{
		`<a class="wikilink" href="https://share.example/s/abc?x=%22y%22">Found</a>`,
		`<a class="wikilink" href="https://share.example/s/abc?x=%22y%22">again</a>`,
		`<a class="wikilink" href="https://share.example/s/abc?x=%22y%22#n-part-two">Found &gt; Part Two</a>`,
		`<span class="wikilink unresolved">Lost</span>`, "<code>[[Code]]</code>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q:\n%s", want, html)
		}
	}
	if strings.ContainsAny(html, "\ue002\ue003") {
		t.Errorf("placeholders left:\n%q", html)
	}
	if res := markdown(t, "no links\n"); res.Links != nil || res.Nonce != "" {
		t.Errorf("a note without links has links %+v nonce %q", res.Links, res.Nonce)
	}
}

// A note's text that looks like a link placeholder stays text: only the render's own
// placeholders, with its nonce, become links.
func TestANoteCannotForgeALinkPlaceholder(t *testing.T) {
	forged := "\ue0020\ue001x\ue0030\ue001"
	res := markdown(t, "[[A]] "+forged+"\n")
	html := render.ResolveLinks(string(res.HTML), res.Nonce, res.Links, []string{"https://share.example/s/a"})
	if strings.Count(html, "<a ") != 1 || !strings.Contains(html, forged) {
		t.Errorf("want one link and the forged text kept:\n%q", html)
	}
}

// Generated markup is inserted where the renderer's placeholders are, after sanitizing:
// text of the note that looks like a placeholder stays text.
func TestANoteCannotForgeAPlaceholder(t *testing.T) {
	src := "> [!tip]\n> \ue0000\ue001 \ue000" + strings.Repeat("0", 32) + "0\ue001 $x$\n"
	html := string(markdown(t, src).HTML)
	if strings.Count(html, "<svg") != 1 || strings.Count(html, "<math") != 1 {
		t.Errorf("want one icon and one formula:\n%s", html)
	}
	if !strings.Contains(html, "\ue0000\ue001 \ue000"+strings.Repeat("0", 32)+"0\ue001") {
		t.Errorf("the note's text was not kept:\n%s", html)
	}
}

func TestMathThatFailsShowsItsSourceAndIsReported(t *testing.T) {
	res := markdown(t, "Bad: $\\frac{$ and good: $x$.\n")
	html := string(res.HTML)
	if !strings.Contains(html, `<code class="math-source">$\frac{$</code>`) || strings.Count(html, "<math") != 1 {
		t.Errorf("HTML:\n%s", html)
	}
	if len(res.Fallbacks) != 1 || res.Fallbacks[0].Ref != `$\frac{$` || !strings.HasPrefix(res.Fallbacks[0].Reason, "the math is not valid TeX: ") {
		t.Errorf("fallbacks = %+v", res.Fallbacks)
	}
}

// Generated markup has its own allowance: 64 KiB and 64 times the bytes that asked for
// it. Icons of thousands of one-letter callouts outgrow it and are left out.
func TestGeneratedMarkupHasItsAllowance(t *testing.T) {
	const n = 3000
	src := strings.Repeat("> [!x] A callout of a kind of one letter\n> with a body of some words.\n\n", n)
	res := markdown(t, src)
	icons := strings.Count(string(res.HTML), "<svg")
	if icons == 0 || icons == n {
		t.Errorf("%d of %d callouts have icons: want some, not all", icons, n)
	}
	allowance := 64<<10 + 64*len("[!x]")*n
	if len(res.HTML) > render.MaxHTML(len(src))+allowance {
		t.Errorf("%d bytes of HTML, over the cap %d and the allowance %d", len(res.HTML), render.MaxHTML(len(src)), allowance)
	}
	if len(res.Fallbacks) != 0 {
		t.Errorf("a left-out icon is no fallback: %v", res.Fallbacks)
	}
}

// A note's formulas convert within a time budget: those after it show as their source.
func TestMathHasATimeBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("converts formulas for 1.5 s")
	}
	var src strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&src, "$\\sum_{k=0}^{%d} \\frac{k^2}{%d}$\n\n", i, i+1)
	}
	res := markdown(t, src.String())
	late := 0
	for _, f := range res.Fallbacks {
		if f.Reason == "the note's time for math ran out" {
			late++
		}
	}
	if late == 0 || strings.Count(string(res.HTML), "<math") == 0 {
		t.Errorf("%d formulas came too late, %d converted: want both", late, strings.Count(string(res.HTML), "<math"))
	}
}

var update = flag.Bool("update", false, "rewrite testdata/*.html from the renderer's output")

// TestVersionChangesWithTheOutput holds the HTML of each fixture testdata/NAME.md (the
// note of every Obsidian construct, and one note per construct) in testdata/NAME.html,
// headed by the Version that rendered it: HTML that changes under the same Version would
// leave stored renders stale for good (they are re-rendered only when Version changes).
// After a change to the renderer's output, bump Version; after that or a change to a
// fixture, run `go test ./libs/render -update`.
func TestVersionChangesWithTheOutput(t *testing.T) {
	fixtures, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range fixtures {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".md"), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, string(src), strings.TrimSuffix(path, ".md")+".html")
		})
	}
}

// checkGolden renders src and compares its HTML, its links resolved by resolveLinked,
// with the golden file path.
func checkGolden(t *testing.T, src, path string) {
	var res render.Result
	var err error
	// The first render of a process also compiles KaTeX and fills the pool of runtimes.
	for range 2 {
		if res, err = render.Markdown(context.Background(), src, render.Options{}); err != nil {
			t.Fatal(err)
		}
		res.HTML = []byte(resolveLinked(res))
	}
	if len(res.Fallbacks) > 0 {
		t.Fatalf("the fixture rendered with fallbacks %+v (a machine too busy for the math budget?)", res.Fallbacks)
	}
	got := fmt.Sprintf("<!-- render.Version %d -->\n%s", render.Version, res.HTML)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantVersion, _, _ := strings.Cut(string(want), "\n")
	gotVersion, _, _ := strings.Cut(got, "\n")
	switch {
	case got == string(want):
	case gotVersion == wantVersion:
		t.Errorf("%s renders differently under the same %s: if the renderer changed, bump render.Version; then run with -update", path, gotVersion)
	default:
		t.Errorf("%s: %s renders it differently from %s: run with -update (and review the diff)", path, gotVersion, wantVersion)
	}
}
