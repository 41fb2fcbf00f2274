package notes_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/notes/internal/assets"
)

// pinnedMermaidSHA256 is the sha256 that `make mermaid` pins for the embedded build.
func pinnedMermaidSHA256(t *testing.T) string {
	t.Helper()
	pin, err := os.ReadFile("internal/assets/mermaid/mermaid.min.js.sha256")
	if err != nil {
		t.Fatal(err)
	}
	sum, _, _ := strings.Cut(string(pin), " ")
	return sum
}

// decode undoes a response's Content-Encoding.
func decode(t *testing.T, r *testkit.Response) []byte {
	t.Helper()
	var rd io.Reader
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "":
		return r.Body
	case "br":
		rd = brotli.NewReader(bytes.NewReader(r.Body))
	case "gzip":
		z, err := gzip.NewReader(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		rd = z
	default:
		t.Fatalf("Content-Encoding %q", enc)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAssetsAreServedImmutable reads the diagram scripts through the real server: the
// pinned Mermaid build byte for byte in every encoding, cacheable for a year under a
// versioned name, each encoding with its own validator, and 404 for any other name.
func TestAssetsAreServedImmutable(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	mermaid, diagrams := assets.DiagramScripts[0], assets.DiagramScripts[1]
	etags := map[string]string{}
	for _, enc := range []string{"identity", "gzip", "br"} {
		r := f.Do(t, testkit.Request{Method: "GET", Path: mermaid, Header: map[string]string{"Accept-Encoding": enc}})
		r.Expect(t, 200, "")
		body := decode(t, r)
		sum := sha256.Sum256(body)
		if got := hex.EncodeToString(sum[:]); got != pinnedMermaidSHA256(t) {
			t.Errorf("%s: the %s body has sha256 %s, not the pinned build's", mermaid, enc, got)
		}
		if want := map[string]string{"identity": "", "gzip": "gzip", "br": "br"}[enc]; r.Header.Get("Content-Encoding") != want {
			t.Errorf("Accept-Encoding %s: Content-Encoding %q", enc, r.Header.Get("Content-Encoding"))
		}
		if enc != "identity" && len(r.Body) > len(body)/3 {
			t.Errorf("%s: %d of %d bytes: not compressed", enc, len(r.Body), len(body))
		}
		if r.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
			r.Header.Get("Vary") != "Accept-Encoding" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s (%s) headers: %v", mermaid, enc, r.Header)
		}
		etags[r.Header.Get("ETag")] = enc
		revalidate := f.Do(t, testkit.Request{Method: "GET", Path: mermaid, Header: map[string]string{"Accept-Encoding": enc, "If-None-Match": r.Header.Get("ETag")}})
		if revalidate.Status != 304 || len(revalidate.Body) != 0 {
			t.Errorf("%s: If-None-Match gave %d with %d bytes, want 304", enc, revalidate.Status, len(revalidate.Body))
		}
	}
	if len(etags) != 3 {
		t.Errorf("the three encodings share validators: %v", etags)
	}
	r := f.Do(t, testkit.Request{Method: "GET", Path: diagrams, Header: map[string]string{"Accept-Encoding": "identity"}})
	r.Expect(t, 200, "")
	if !bytes.Contains(r.Body, []byte("securityLevel: 'strict'")) || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("%s: %v %.80q", diagrams, r.Header, r.Body)
	}
	if head := f.Do(t, testkit.Request{Method: "HEAD", Path: diagrams}); head.Status != 200 || len(head.Body) != 0 {
		t.Errorf("HEAD %s: %d with %d bytes", diagrams, head.Status, len(head.Body))
	}
	for _, path := range []string{"/assets/mermaid-0.0.1.min.js", "/assets/diagrams.js", "/assets/mermaid.min.js", "/assets/", "/assets",
		"/assets/..%2Fgo.mod", "/assets/mermaid%2Fmermaid.min.js", mermaid + "/x", strings.ToUpper(diagrams)} {
		f.Do(t, testkit.Request{Method: "GET", Path: path}).Expect(t, 404, "not_found")
	}
}

// diagramNote has a diagram among ordinary Markdown.
const diagramNote = "# Flow\n\n```mermaid\ngraph TD\n  A[Write] --> B[Publish]\n```\n\nAfter the diagram.\n"

// TestOnlyPagesWithADiagramLoadScripts checks the page shell: a page with a Mermaid
// diagram (also one the note writes with ~~~) names the two scripts of its own origin and
// allows exactly them; a page without one has no script tag and no script-src.
func TestOnlyPagesWithADiagramLoadScripts(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	tags := `<script src="` + assets.DiagramScripts[0] + `" defer></script>` + "\n" + `<script src="` + assets.DiagramScripts[1] + `" defer></script>`
	for name, content := range map[string]string{"backticks": diagramNote, "tildes": strings.ReplaceAll(diagramNote, "```", "~~~")} {
		resp, html := pageOf(t, f, f.publish(f.acc, note.Draft{Content: content}))
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(html, tags) || strings.Count(html, "<script") != 2 {
			t.Errorf("%s: the page lacks the two diagram scripts:\n%s", name, html)
		}
		if !strings.Contains(csp, "default-src 'none'; script-src 'self'; style-src 'unsafe-inline';") || strings.Count(csp, "script-src") != 1 ||
			strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "script-src 'self' ") {
			t.Errorf("%s: CSP %q", name, csp)
		}
		if !strings.Contains(html, `<pre class="mermaid">graph TD`+"\n"+`  A[Write] --&gt; B[Publish]`) || !strings.Contains(html, `<html lang="en" data-theme="system">`) {
			t.Errorf("%s: the diagram's source or the page's theme is missing:\n%s", name, html)
		}
	}
	for name, content := range map[string]string{"no diagram": typical, "mermaid as text": "A `<pre class=\"mermaid\">` and ```mermaid in prose.\n\n```go\n// ```mermaid\n```\n"} {
		resp, html := pageOf(t, f, f.publish(f.acc, note.Draft{Content: content}))
		if csp := resp.Header.Get("Content-Security-Policy"); strings.Contains(html, "<script") || strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: a page without a diagram loads script (CSP %q)", name, csp)
		}
	}
}
