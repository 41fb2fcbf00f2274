package render

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// chromaCorpus is chroma's own test corpus: a file of code for each of about 150 lexers
// (lexers/testdata/<lexer>.actual in the module), by lexer name.
func chromaCorpus(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/alecthomas/chroma/v2").Output()
	if err != nil {
		t.Fatalf("go list chroma: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "lexers", "testdata", "*.actual"))
	if err != nil || len(files) < 100 {
		t.Fatalf("chroma's corpus: %d files, %v", len(files), err)
	}
	corpus := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus[strings.TrimSuffix(filepath.Base(f), ".actual")] = string(b)
	}
	return corpus
}

// TestHighlightingIsChromas checks the filtered lexing and the streaming formatter
// against chroma's own, on chroma's corpus: the same tokens and the same HTML, byte for
// byte, for every lexer of it that is a RegexLexer.
func TestHighlightingIsChromas(t *testing.T) {
	formatter := chromahtml.New(chromahtml.WithClasses(true), chromahtml.ClassPrefix(CodeClassPrefix))
	fast := 0
	for name, code := range chromaCorpus(t) {
		lexer := lexers.Get(name)
		if lexer == nil {
			continue
		}
		want, err := chroma.Tokenise(lexer, nil, code)
		if err != nil {
			continue // chroma cannot lex it either
		}
		if _, ok := lexer.(*chroma.RegexLexer); ok {
			fast++
		}
		it, err := tokenise(lexer, code)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := it.Tokens()
		for i := range max(len(got), len(want)) {
			if i >= len(got) || i >= len(want) || got[i] != want[i] {
				t.Errorf("%s: %d tokens, want %d; the first difference at token %d", name, len(got), len(want), i)
				break
			}
		}

		var html strings.Builder
		it, _ = chroma.Coalesce(lexer).Tokenise(nil, code)
		if err := formatter.Format(&html, styles.Fallback, it); err != nil {
			t.Fatalf("%s: chroma's formatter: %v", name, err)
		}
		w := &capped{limit: 1 << 30}
		it, _ = chroma.Coalesce(stoppable{lexer, new(atomic.Bool)}).Tokenise(nil, code)
		if err := writeHighlighted(w, it); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(w.buf) != html.String() {
			t.Errorf("%s: the HTML differs from chroma's formatter's", name)
		}
	}
	if fast < 100 {
		t.Errorf("only %d lexers of the corpus are RegexLexers", fast)
	}
}

// TestHighlightingStopsAtTheCap: a block whose HTML passes the cap stops being lexed and
// keeps nothing.
func TestHighlightingStopsAtTheCap(t *testing.T) {
	code := strings.Repeat("x := 1\n", 10_000)
	var tokens int
	it, err := tokenise(lexers.Get("go"), code)
	if err != nil {
		t.Fatal(err)
	}
	counted := func() chroma.Token { tokens++; return it() }
	w := &capped{limit: 1000}
	if err := writeHighlighted(w, counted); err != errTooLarge || w.buf != nil {
		t.Fatalf("writeHighlighted = %v, %d bytes kept; want errTooLarge and none", err, len(w.buf))
	}
	if tokens > 100 {
		t.Errorf("%d tokens lexed for 1,000 bytes of HTML", tokens)
	}
}
