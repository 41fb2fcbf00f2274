// Package assets holds the files that note pages load besides themselves, embedded in the
// binary and served from the service's own origin by the route routes.Asset: the pinned
// Mermaid build (mermaid/, fetched by `make mermaid`, MIT licence in mermaid/LICENSE) and
// diagrams.js, which draws a page's diagrams with it. Each is served under a name that
// changes with its content (Mermaid's version, the script's hash), so that a browser may
// keep it for a year without asking again; gzip and brotli variants are made once per
// process, on the first request that takes them.
//
// Diagrams are drawn in the reader's browser, by Mermaid itself, because no Go package
// draws the same diagrams on the server. Mermaid is a browser program: it measures its
// labels through the DOM (getBBox, getComputedTextLength) and builds its SVG with d3, so
// goja (which runs KaTeX for math in libs/render/mathml) would need a DOM with layout and
// fonts as well, which no Go package provides; the Go wrappers that run mermaid.js do it in
// a headless Chromium (chromedp), a browser on the server. The pure-Go reimplementations
// (github.com/zkrebbekx/go-mermaid, github.com/bvolpato/mermaid-go-renderer, after the Rust
// mermaid-rs-renderer) are young single-author projects with their own layout and text
// metrics and a subset of Mermaid's diagram types, so a note would not look as it does in
// Obsidian; docs/api.md "Diagrams" has the survey and when to look again.
package assets

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/routes"
)

var (
	//go:embed mermaid/mermaid.min.js
	mermaidJS []byte
	//go:embed mermaid/VERSION
	mermaidVersion string
	//go:embed diagrams.js
	diagramsJS []byte
)

// MermaidVersion is the version of the embedded Mermaid build (mermaid/VERSION).
var MermaidVersion = strings.TrimSpace(mermaidVersion)

// file is one embedded asset and its compressed variants, each made on first use.
type file struct {
	body        []byte
	contentType string
	etag        string
	variants    map[string]func() []byte // by content encoding
}

func newFile(body []byte, contentType string) *file {
	sum := sha256.Sum256(body)
	f := &file{body: body, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, variants: map[string]func() []byte{}}
	for _, enc := range []string{"br", "gzip"} {
		f.variants[enc] = sync.OnceValue(func() []byte { return noteapi.Encode(body, enc) })
	}
	return f
}

const javascript = "text/javascript; charset=utf-8"

// The names the assets are served under.
var (
	mermaidName  = "mermaid-" + MermaidVersion + ".min.js"
	diagramsName = "diagrams-" + contentHash(diagramsJS) + ".js"
)

// files are the assets by the name they are served under.
var files = map[string]*file{
	mermaidName:  newFile(mermaidJS, javascript),
	diagramsName: newFile(diagramsJS, javascript),
}

// contentHash is a short hash of b for a file name: 12 hex digits.
func contentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// DiagramScripts are the paths of the scripts a page with a Mermaid diagram loads, in
// order: Mermaid, then diagrams.js, which uses it. They are paths on the page's own origin,
// so that the page's script-src 'self' admits them however the service is reached.
var DiagramScripts = []string{routes.Asset.URL("", mermaidName), routes.Asset.URL("", diagramsName)}

// Immutable is the Cache-Control of an asset: its name changes with its content, so a
// cache may keep it for a year without revalidating.
const Immutable = "public, max-age=31536000, immutable"

// Serve answers GET /assets/:file: the embedded file, compressed when the client takes
// it, or 404 not_found for a name that is not an asset's.
func Serve(c *gin.Context) {
	f, ok := files[c.Param("file")]
	if !ok {
		errs.Abort(c, errs.NotFoundError())
		return
	}
	h := c.Writer.Header()
	h.Set("Cache-Control", Immutable)
	h.Set("Vary", "Accept-Encoding")
	body, etag := f.body, f.etag
	enc := noteapi.Negotiate(c.GetHeader("Accept-Encoding"))
	if enc != "" {
		body, etag = f.variants[enc](), noteapi.VariantTag(etag, enc)
	}
	h.Set("ETag", etag)
	if noteapi.ETagMatches(c.GetHeader("If-None-Match"), etag) {
		c.Status(http.StatusNotModified)
		return
	}
	if enc != "" {
		h.Set("Content-Encoding", enc)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.Data(http.StatusOK, f.contentType, body)
}
