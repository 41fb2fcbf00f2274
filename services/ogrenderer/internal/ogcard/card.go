// Package ogcard draws the social preview card of a publication: a 1200×630 PNG with the
// title, the summary, the author and the site name in the owner's theme and accent colour.
// It knows nothing of HTTP or storage; every string it draws is untrusted and may be
// anything, so layout never panics and never draws outside the card's margins.
package ogcard

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"sync"

	"github.com/disintegration/imaging"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Version names the drawing: change it whenever the picture for the same inputs changes,
// so that cached cards (and their ETags) are drawn anew.
const Version = 1

// Size of the card: the 1.91:1 image that Open Graph and Twitter cards show.
const (
	Width  = 1200
	Height = 630
)

// UntitledTitle stands in for a missing or blank title.
const UntitledTitle = "Untitled note"

// Line limits of the title and the summary.
const (
	TitleLines   = 3
	SummaryLines = 3
)

// Layout, in pixels. The text column starts right of the accent bar and ends at the right
// margin; the footer band at the bottom holds the site name and the author.
const (
	barWidth     = 16
	marginLeft   = 96
	marginRight  = 88
	marginTop    = 64
	footerHeight = 104
	footerGap    = 32 // Between the text block and the footer band.
	sectionGap   = 28 // Between the title and the summary.
	authorGap    = 40 // Between the site name and the author.

	titleSize   = 60
	summarySize = 32
	footerSize  = 28
	lineSpacing = 1.18 // Line height as a multiple of the font size.

	footerTint = 0.10 // Opacity of the accent over the footer band.
)

// ColumnWidth is the width of the text column; no text is drawn outside it.
const ColumnWidth = Width - marginLeft - marginRight

// Card is what a preview shows. Strings are drawn as given after Clean; Author is
// omitted when empty.
type Card struct {
	Title   string
	Summary string
	Author  string
	Site    string
	Dark    bool
	Accent  color.NRGBA
}

// palette is the colours of one theme.
type palette struct {
	background, title, summary, author color.NRGBA
}

var (
	light = palette{background: rgb(0xf8fafc), title: rgb(0x0f172a), summary: rgb(0x475569), author: rgb(0x334155)}
	dark  = palette{background: rgb(0x0f1117), title: rgb(0xf1f5f9), summary: rgb(0xa3adbd), author: rgb(0xcbd5e1)}
)

func rgb(v uint32) color.NRGBA {
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// Renderer draws cards. The parsed fonts are shared; the faces that rasterise glyphs keep
// scratch buffers and are made per drawing, so a Renderer is safe for concurrent use.
type Renderer struct {
	bold, regular *opentype.Font
	pool          encoderPool
}

// NewRenderer parses the Go fonts, which are compiled into the binary: nothing is read
// from disk at run time.
func NewRenderer() (*Renderer, error) {
	bold, err := opentype.Parse(gobold.TTF)
	if err != nil {
		return nil, fmt.Errorf("parse gobold: %w", err)
	}
	regular, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("parse goregular: %w", err)
	}
	return &Renderer{bold: bold, regular: regular}, nil
}

// faces are the sized faces of one drawing.
type faces struct {
	title, summary, site, author font.Face
}

func (r *Renderer) faces() (faces, error) {
	var f faces
	var err error
	for _, x := range []struct {
		dst  *font.Face
		font *opentype.Font
		size float64
	}{
		{&f.title, r.bold, titleSize},
		{&f.summary, r.regular, summarySize},
		{&f.site, r.bold, footerSize},
		{&f.author, r.regular, footerSize},
	} {
		if *x.dst, err = opentype.NewFace(x.font, &opentype.FaceOptions{Size: x.size, DPI: 72, Hinting: font.HintingFull}); err != nil {
			return faces{}, fmt.Errorf("font face: %w", err)
		}
	}
	return f, nil
}

// PNG draws c and encodes it as PNG.
func (r *Renderer) PNG(c Card) ([]byte, error) {
	img, err := r.Draw(c)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(64 << 10)
	enc := png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &r.pool}
	if err := enc.Encode(&buf, opaqueRGBA(img)); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return buf.Bytes(), nil
}

// Draw draws c on a new canvas.
func (r *Renderer) Draw(c Card) (*image.NRGBA, error) {
	f, err := r.faces()
	if err != nil {
		return nil, err
	}
	p := light
	if c.Dark {
		p = dark
	}
	accent := c.Accent
	accent.A = 0xff
	canvas, band := drawBackground(p, accent)

	// Text goes on an RGBA view of the same pixels (see opaqueRGBA), clipped to the text
	// column: glyphs that reach further (a tall accent, a wide missing-glyph box) are cut
	// at the margin instead of being drawn over it.
	bandTop := Height - footerHeight
	dst := opaqueRGBA(canvas)
	drawBody(dst.SubImage(image.Rect(marginLeft, marginTop, Width-marginRight, bandTop-footerGap/2)).(*image.RGBA), f, p, c)
	drawFooter(dst.SubImage(image.Rect(marginLeft, bandTop, Width-marginRight, Height)).(*image.RGBA), f, p, c, accent, band)
	return canvas, nil
}

// drawBackground makes the canvas: the background, a band tinted with the accent for the
// footer, and the accent bar. It returns the canvas and the colour of the band.
func drawBackground(p palette, accent color.NRGBA) (canvas *image.NRGBA, band color.NRGBA) {
	// imaging's Paste and Overlay return copies of the whole canvas, so the band is
	// composed on its own and the pieces are then drawn into the one canvas.
	bandTop := Height - footerHeight
	canvas = imaging.New(Width, Height, p.background)
	bandImg := imaging.Overlay(imaging.New(Width, footerHeight, p.background), imaging.New(Width, footerHeight, accent), image.Point{}, footerTint)
	draw.Draw(canvas, image.Rect(0, bandTop, Width, Height), bandImg, image.Point{}, draw.Src)
	draw.Draw(canvas, image.Rect(0, 0, barWidth, Height), imaging.New(barWidth, Height, accent), image.Point{}, draw.Src)
	return canvas, bandImg.NRGBAAt(0, 0)
}

// drawBody draws the title and the summary on body, the text column above the footer.
func drawBody(body *image.RGBA, f faces, p palette, c Card) {
	bandTop := Height - footerHeight
	width := fixed.I(ColumnWidth)
	title := Wrap(f.title, c.Title, width, TitleLines)
	if len(title) == 0 {
		title = Wrap(f.title, UntitledTitle, width, TitleLines)
	}
	summary := Wrap(f.summary, c.Summary, width, SummaryLines)

	// The title and summary block is centred vertically between the top margin and the
	// footer, so that a short card does not cling to the top.
	titleLH, summaryLH := lineHeight(titleSize), lineHeight(summarySize)
	height := blockHeight(f.title, len(title), titleLH)
	if len(summary) > 0 {
		height += sectionGap + blockHeight(f.summary, len(summary), summaryLH)
	}
	top := marginTop + max(0, (bandTop-footerGap-marginTop-height)/2)
	last := drawLines(body, f.title, p.title, title, top+f.title.Metrics().Ascent.Ceil(), titleLH)
	if len(summary) > 0 {
		y := last + f.title.Metrics().Descent.Ceil() + sectionGap + f.summary.Metrics().Ascent.Ceil()
		drawLines(body, f.summary, p.summary, summary, y, summaryLH)
	}
}

// drawFooter draws on footer, the text column across the band, the site name in the
// accent colour (or the title colour when the accent would be hard to read on the band
// colour), then the author, cut to the room left.
func drawFooter(footer *image.RGBA, f faces, p palette, c Card, accent, band color.NRGBA) {
	site := accent
	if contrast(accent, band) < 2.2 {
		site = p.title
	}
	m := f.site.Metrics()
	baseline := Height - footerHeight + (footerHeight+m.CapHeight.Ceil())/2
	siteLine := Wrap(f.site, c.Site, fixed.I(ColumnWidth), 1)
	siteWidth := 0
	if len(siteLine) > 0 {
		drawLines(footer, f.site, site, siteLine, baseline, 0)
		siteWidth = font.MeasureString(f.site, siteLine[0]).Ceil() + authorGap
	}
	if c.Author != "" && siteWidth < ColumnWidth {
		if line := Wrap(f.author, c.Author, fixed.I(ColumnWidth-siteWidth), 1); len(line) > 0 {
			x := Width - marginRight - font.MeasureString(f.author, line[0]).Ceil()
			d := font.Drawer{Dst: footer, Src: image.NewUniform(p.author), Face: f.author,
				Dot: fixed.P(max(x, marginLeft+siteWidth), baseline)}
			d.DrawString(line[0])
		}
	}
}

// lineHeight is the distance between baselines for a font size.
func lineHeight(size float64) int { return int(size*lineSpacing + 0.5) }

// blockHeight is the height of n lines from the first line's ascent to the last line's
// descent.
func blockHeight(f font.Face, n, lh int) int {
	if n == 0 {
		return 0
	}
	m := f.Metrics()
	return m.Ascent.Ceil() + (n-1)*lh + m.Descent.Ceil()
}

// drawLines draws lines from the left edge of dst, the first baseline at y and the next
// ones lh below each other, and returns the last baseline.
func drawLines(dst *image.RGBA, f font.Face, c color.NRGBA, lines []string, y, lh int) int {
	d := font.Drawer{Dst: dst, Src: image.NewUniform(c), Face: f}
	for i, line := range lines {
		if i > 0 {
			y += lh
		}
		d.Dot = fixed.P(dst.Rect.Min.X, y)
		d.DrawString(line)
	}
	return y
}

// opaqueRGBA views an opaque NRGBA image as RGBA without copying: with every alpha at
// 0xff, premultiplied and straight colour are the same bytes. The view lets image/draw
// take its fast path for glyph masks and image/png its fast path for encoding. Every
// canvas here is opaque: the background is, the bars and overlays are opaque too, and
// text is drawn over them.
func opaqueRGBA(m *image.NRGBA) *image.RGBA {
	return &image.RGBA{Pix: m.Pix, Stride: m.Stride, Rect: m.Rect}
}

// contrast is the WCAG contrast ratio of two opaque colours, from 1 to 21.
func contrast(a, b color.NRGBA) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(c color.NRGBA) float64 {
	ch := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.03928 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(c.R) + 0.7152*ch(c.G) + 0.0722*ch(c.B)
}

// encoderPool reuses the PNG encoder's buffers between drawings.
type encoderPool struct{ p sync.Pool }

func (e *encoderPool) Get() *png.EncoderBuffer {
	b, _ := e.p.Get().(*png.EncoderBuffer)
	return b
}

func (e *encoderPool) Put(b *png.EncoderBuffer) { e.p.Put(b) }
