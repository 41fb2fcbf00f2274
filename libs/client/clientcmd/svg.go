package clientcmd

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fyne-io/oksvg"
	"github.com/srwiley/rasterx"
)

// The bounds of an SVG's rasterization: no side over maxSVGSide pixels (applied before
// the image is allocated), <use> nested at most maxUseDepth deep and expanded at most
// maxUseExpansions times in all (a chain of <use> each naming the previous twice would
// otherwise draw 2^depth shapes), at most maxSVGElements elements nested at most
// maxSVGNesting deep, and svgTimeout of drawing.
const (
	maxSVGSide       = 2048
	maxUseDepth      = 8
	maxUseExpansions = 10_000
	maxSVGElements   = 100_000
	maxSVGNesting    = 256
	svgTimeout       = 5 * time.Second
)

// rasterizeSVG draws an SVG as a PNG of its own size (at most maxSVGSide pixels a side)
// and returns it with the SVG's own width. Nothing the SVG references is loaded: the
// rasterizer (github.com/fyne-io/oksvg) reads no file and no URL, draws no <image>, and
// a <use> that names anything but an element of the same document is refused here first.
func rasterizeSVG(src []byte) ([]byte, int, error) {
	w, h, err := checkSVG(src)
	if err != nil {
		return nil, 0, err
	}
	scale := min(1, maxSVGSide/max(w, h))
	pw, ph := max(1, int(math.Ceil(w*scale))), max(1, int(math.Ceil(h*scale)))
	type result struct {
		png []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("the rasterizer failed: %v", p)}
			}
		}()
		b, err := drawSVG(src, pw, ph)
		done <- result{b, err}
	}()
	t := time.NewTimer(svgTimeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.png, max(1, int(math.Round(w))), r.err
	case <-t.C:
		// The drawing goroutine is left to finish; its result is dropped.
		return nil, 0, fmt.Errorf("drawing took longer than %v", svgTimeout)
	}
}

// currentColor is the CSS keyword for the color of the text around: icons (Lucide's,
// which Obsidian's help vault embeds) draw with it. The rasterizer knows no text color and
// refuses the keyword, and a PNG cannot follow the page's theme, so the keyword becomes
// iconGrey, which reads on a light and a dark page alike.
var currentColor = regexp.MustCompile(`(?i)currentcolor`)

const iconGrey = "#808080"

// drawSVG rasterizes src into a pw×ph PNG.
func drawSVG(src []byte, pw, ph int) ([]byte, error) {
	src = currentColor.ReplaceAll(src, []byte(iconGrey))
	icon, err := oksvg.ReadIconStream(bytes.NewReader(src), oksvg.IgnoreErrorMode)
	if err != nil {
		return nil, err
	}
	icon.SetTarget(0, 0, float64(pw), float64(ph))
	img := image.NewRGBA(image.Rect(0, 0, pw, ph))
	scanner := rasterx.NewScannerGV(pw, ph, img, img.Bounds())
	icon.Draw(rasterx.NewDasher(pw, ph, scanner), 1)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// svgScan is what checkSVG learns of a document.
type svgScan struct {
	ids   []string            // the ids of the open elements, outermost first ("" for none)
	uses  map[string][]string // id → the ids its <use> elements name, nested ones included
	roots []string            // the ids that <use> outside any element with an id name
	w, h  float64
}

// checkSVG reads the whole document once, within the bounds, and returns the SVG's own
// size: its width and height (in px), else its viewBox's.
func checkSVG(src []byte) (w, h float64, err error) {
	s := &svgScan{uses: map[string][]string{}}
	d := xml.NewDecoder(bytes.NewReader(src))
	for elements := 0; ; {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, fmt.Errorf("not an SVG document: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if elements++; elements > maxSVGElements || len(s.ids) >= maxSVGNesting {
				return 0, 0, fmt.Errorf("over %d elements, or nested over %d deep", maxSVGElements, maxSVGNesting)
			}
			if err := s.start(t, elements == 1); err != nil {
				return 0, 0, err
			}
		case xml.EndElement:
			s.ids = s.ids[:max(len(s.ids)-1, 0)]
		}
	}
	if s.w <= 0 || s.h <= 0 || s.w > math.MaxInt32 || s.h > math.MaxInt32 {
		return 0, 0, errors.New("no width and height, nor a viewBox, of a usable size")
	}
	return s.w, s.h, s.checkUses()
}

// start takes one start element.
func (s *svgScan) start(t xml.StartElement, root bool) error {
	if root {
		if t.Name.Local != "svg" {
			return errors.New("not an SVG document")
		}
		s.size(t.Attr)
	}
	id := ""
	for _, a := range t.Attr {
		if a.Name.Local == "id" {
			id = a.Value
		}
	}
	s.ids = append(s.ids, id) // first: a <use> with an id may name itself
	if t.Name.Local == "use" {
		for _, a := range t.Attr {
			if a.Name.Local != "href" {
				continue
			}
			target, ok := strings.CutPrefix(strings.TrimSpace(a.Value), "#")
			if !ok {
				return fmt.Errorf("a <use> names %q, outside the document: nothing outside is loaded", a.Value)
			}
			s.addUse(target)
		}
	}
	return nil
}

// addUse records that the open elements use target.
func (s *svgScan) addUse(target string) {
	named := false
	for _, id := range s.ids {
		if id != "" {
			s.uses[id] = append(s.uses[id], target)
			named = true
		}
	}
	if !named {
		s.roots = append(s.roots, target)
	}
}

// size reads the root's width and height, else its viewBox.
func (s *svgScan) size(attrs []xml.Attr) {
	var vb []float64
	for _, a := range attrs {
		switch a.Name.Local {
		case "width":
			s.w = pixels(a.Value)
		case "height":
			s.h = pixels(a.Value)
		case "viewBox":
			for _, f := range strings.FieldsFunc(a.Value, func(r rune) bool { return r == ',' || r == ' ' }) {
				v, err := strconv.ParseFloat(f, 64)
				if err != nil {
					return
				}
				vb = append(vb, v)
			}
		}
	}
	if len(vb) == 4 && (s.w <= 0 || s.h <= 0) {
		s.w, s.h = vb[2], vb[3]
	}
}

// pixels is a length in px (a bare number or "px"); 0 for other units and percentages.
func pixels(v string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "px"), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// checkUses refuses a cycle of <use>, a chain deeper than maxUseDepth, and more than
// maxUseExpansions expansions in all.
func (s *svgScan) checkUses() error {
	cost := map[string]int{}
	visiting := map[string]bool{}
	var expand func(id string, depth int) (int, error)
	expand = func(id string, depth int) (int, error) {
		if depth > maxUseDepth {
			return 0, fmt.Errorf("<use> nested over %d deep", maxUseDepth)
		}
		if visiting[id] {
			return 0, fmt.Errorf("<use> of #%s within itself", id)
		}
		if c, ok := cost[id]; ok {
			return c, nil
		}
		visiting[id] = true
		defer delete(visiting, id)
		total := 1
		for _, next := range s.uses[id] {
			c, err := expand(next, depth+1)
			if err != nil {
				return 0, err
			}
			if total += c; total > maxUseExpansions {
				return 0, fmt.Errorf("<use> expanding to over %d elements", maxUseExpansions)
			}
		}
		cost[id] = total
		return total, nil
	}
	// Every element with an id is counted as drawn once, in or out of <defs>: more than
	// the rasterizer draws, never less.
	total := 0
	for _, id := range append(slices.Sorted(maps.Keys(s.uses)), s.roots...) {
		c, err := expand(id, 1)
		if err != nil {
			return err
		}
		if total += c; total > maxUseExpansions {
			return fmt.Errorf("<use> expanding to over %d elements", maxUseExpansions)
		}
	}
	return nil
}
