package clientcmd

import (
	"bytes"
	"fmt"
	"image/png"
	"net"
	"strings"
	"testing"
	"time"
)

func TestAnSVGIsDrawnAtItsOwnSizeWithinTheCap(t *testing.T) {
	for _, tc := range []struct {
		rule, svg  string
		w, h, ownW int
	}{
		{"width and height", `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60"><rect width="50" height="50" fill="red"/></svg>`, 120, 60, 120},
		{"a viewBox alone", `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 30 40"><circle cx="10" cy="10" r="5"/></svg>`, 30, 40, 30},
		{"px units", `<svg xmlns="http://www.w3.org/2000/svg" width="64px" height="32px"></svg>`, 64, 32, 64},
		{"a huge size is capped before allocating", `<svg xmlns="http://www.w3.org/2000/svg" width="100000000" height="50000000"></svg>`, 2048, 1024, 100000000},
	} {
		start := time.Now()
		b, own, err := rasterizeSVG([]byte(tc.svg))
		if err != nil {
			t.Errorf("%s: %v", tc.rule, err)
			continue
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: not a PNG: %v", tc.rule, err)
		}
		if s := img.Bounds().Size(); s.X != tc.w || s.Y != tc.h || own != tc.ownW {
			t.Errorf("%s: %v, own width %d; want %dx%d, %d", tc.rule, s, own, tc.w, tc.h, tc.ownW)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: took %v", tc.rule, took)
		}
	}
}

// An icon drawn with the text's color (stroke="currentColor", as Lucide's are) is drawn,
// in grey, not refused.
func TestAnIconInTheTextColorIsDrawn(t *testing.T) {
	b, _, err := rasterizeSVG([]byte(`<svg xmlns="http://www.w3.org/2000/svg" width="18" height="18" viewBox="0 0 24 24" fill="none" ` +
		`stroke="currentColor" stroke-width="2"><path d="M3 12h18"/></svg>`))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, a := img.At(9, 9).RGBA(); a == 0 {
		t.Error("the icon's line is not drawn")
	}
}

// TestAnSVGLoadsNothingAndCannotHang: what an SVG references is never fetched (a
// listener counts connections), and documents built to hang or exhaust the rasterizer
// are refused quickly.
func TestAnSVGLoadsNothingAndCannotHang(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialed := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dialed <- struct{}{}
			c.Close()
		}
	}()
	url := "http://" + ln.Addr().String() + "/x"
	deep := `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"><defs>`
	for i := range 20 {
		deep += fmt.Sprintf(`<g id="g%d"><use xlink:href="#g%d"/><use xlink:href="#g%d"/></g>`, i+1, i, i)
	}
	deep += `<rect id="g0" width="1" height="1"/></defs><use xlink:href="#g20"/></svg>`
	for _, tc := range []struct{ rule, svg, want string }{
		{"an external image is not loaded", `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"><image xlink:href="` + url + `" width="10" height="10"/><rect style="fill:url(` + url + `)" width="5" height="5"/></svg>`, ""},
		{"a <use> of another document", `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><use href="` + url + `#a"/></svg>`, "outside the document"},
		{"a <use> of a file", `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><use href="file:///etc/passwd#a"/></svg>`, "outside the document"},
		{"an external entity", `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "` + url + `">]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><title>&x;</title></svg>`, "not an SVG document"},
		{"a <use> of itself", `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><defs><use id="a" href="#a"/></defs><use href="#a"/></svg>`, "within itself"},
		{"a cycle of <use>", `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><defs><g id="a"><use href="#b"/></g><g id="b"><use href="#a"/></g></defs><use href="#a"/></svg>`, "within itself"},
		{"<use> doubling 20 times", deep, "<use>"},
		{"no size", `<svg xmlns="http://www.w3.org/2000/svg"></svg>`, "no width and height"},
		{"not SVG", `<html></html>`, "not an SVG"},
		{"elements nested deeper than the bound", `<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1">` + strings.Repeat("<g>", 1000) + strings.Repeat("</g>", 1000) + `</svg>`, "nested"},
	} {
		start := time.Now()
		_, _, err := rasterizeSVG([]byte(tc.svg))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want drawn without it", tc.rule, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.rule, err, tc.want)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: took %v", tc.rule, took)
		}
	}
	select {
	case <-dialed:
		t.Error("rasterizing connected to a URL the SVG names")
	case <-time.After(100 * time.Millisecond):
	}
}
