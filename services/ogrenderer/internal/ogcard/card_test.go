package ogcard_test

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/services/ogrenderer/internal/ogcard"
)

// typical is a card as most notes make it.
var typical = ogcard.Card{
	Title:   "Notes on running Postgres and Redis in a small Kubernetes cluster",
	Summary: "What I learned moving a side project from one VM to a three-node cluster: storage classes, backups that actually restore, connection pooling, and why the cache should never be the only copy of anything.",
	Author:  "Ada Lovelace",
	Site:    "sharenote",
	Accent:  color.NRGBA{R: 0x5b, G: 0x6e, B: 0xe1, A: 0xff},
}

func newRenderer(t testing.TB) *ogcard.Renderer {
	t.Helper()
	r, err := ogcard.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func decode(t testing.TB, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode png: %v", err)
	}
	if got := img.Bounds(); got != image.Rect(0, 0, ogcard.Width, ogcard.Height) {
		t.Fatalf("bounds = %v, want 1200×630", got)
	}
	return img
}

func TestDrawingIsDeterministic(t *testing.T) {
	r := newRenderer(t)
	a, err := r.PNG(typical)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.PNG(typical)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the same card drew two different PNGs")
	}
	decode(t, a)
}

func TestNothingIsDrawnInTheMargins(t *testing.T) {
	r := newRenderer(t)
	// Text that fills every line to the edge, with glyphs that reach far (boxes for
	// missing glyphs, tall accents) and a long author.
	long := ogcard.Card{
		Title:   strings.Repeat("WÅÉÎ 中文 😀 ", 80),
		Summary: strings.Repeat("Ŵ̂ỹ̃ ", 400),
		Author:  strings.Repeat("M", 200),
		Site:    "sharenote",
		Accent:  typical.Accent,
	}
	for _, dark := range []bool{false, true} {
		long.Dark, typical.Dark = dark, dark
		empty, err := r.Draw(ogcard.Card{Site: "", Dark: dark, Accent: typical.Accent})
		if err != nil {
			t.Fatal(err)
		}
		full, err := r.Draw(long)
		if err != nil {
			t.Fatal(err)
		}
		// The margins are the left margin right of the bar, the right margin and the top
		// margin; the footer band belongs to the footer.
		margins := []image.Rectangle{
			image.Rect(16, 0, 96, ogcard.Height),
			image.Rect(ogcard.Width-88, 0, ogcard.Width, ogcard.Height),
			image.Rect(16, 0, ogcard.Width, 64),
		}
		for _, m := range margins {
			for y := m.Min.Y; y < m.Max.Y; y++ {
				for x := m.Min.X; x < m.Max.X; x++ {
					if full.NRGBAAt(x, y) != empty.NRGBAAt(x, y) {
						t.Fatalf("dark=%v: pixel (%d,%d) in the margin %v was drawn on", dark, x, y, m)
					}
				}
			}
		}
	}
	typical.Dark = false
}

var update = flag.Bool("update", false, "rewrite the golden cards in testdata/")

// TestTypicalCardMatchesItsGolden draws the typical card in both themes and compares it,
// pixel by pixel, with the committed golden PNGs, which are also there for a person to
// look at: a change of layout, font, colour or wrapping fails here until the goldens are
// looked at and rewritten with -update.
func TestTypicalCardMatchesItsGolden(t *testing.T) {
	r := newRenderer(t)
	for name, dark := range map[string]bool{"typical-light.png": false, "typical-dark.png": true} {
		t.Run(name, func(t *testing.T) {
			c := typical
			c.Dark = dark
			b, err := r.PNG(c)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(golden, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			got, exp := decode(t, b), decode(t, want)
			differ := 0
			for y := range ogcard.Height {
				for x := range ogcard.Width {
					if color.NRGBAModel.Convert(got.At(x, y)) != color.NRGBAModel.Convert(exp.At(x, y)) {
						differ++
					}
				}
			}
			if differ > 0 {
				t.Errorf("%d of %d pixels differ from %s; look at the new card and rewrite it with -update if it is right",
					differ, ogcard.Width*ogcard.Height, golden)
			}
		})
	}
}

func BenchmarkRender(b *testing.B) {
	r := newRenderer(b)
	b.ReportAllocs()
	var size int
	for b.Loop() {
		png, err := r.PNG(typical)
		if err != nil {
			b.Fatal(err)
		}
		size = len(png)
	}
	b.ReportMetric(float64(size), "png-bytes")
}
