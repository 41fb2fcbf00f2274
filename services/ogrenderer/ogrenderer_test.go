package ogrenderer_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/ogrenderer"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// Regions of the card the checks look at (see internal/ogcard for the layout).
var (
	textRegion   = image.Rect(96, 64, 1112, 494)   // Title and summary.
	authorRegion = image.Rect(700, 526, 1112, 630) // Right of the footer band.
	accentBar    = image.Pt(8, 315)
	corner       = image.Pt(1199, 0) // Top right: background only.
)

// fixture is a server running the og-renderer target with one account. Notes are
// published through the domain, since the publish route belongs to another service.
type fixture struct {
	*testkit.Server
	t   *testing.T
	acc testkit.Account
}

func newFixture(t *testing.T, b testkit.Backend) *fixture {
	s := testkit.StartServer(t, b, []app.Target{ogrenderer.Target, testkit.Arranger}, testkit.WithClock(testkit.NewClock()))
	f := &fixture{Server: s, t: t, acc: s.NewAccount(t, "ada")}
	f.settings(account.SettingsChange{Name: new("Ada Lovelace")})
	return f
}

func ptr[T any](v T) *T { return &v }

func (f *fixture) publish(d note.Draft) string {
	f.t.Helper()
	p, err := testkit.Must(f.App.Deps().Publisher()).Publish(context.Background(), f.acc.UserCUID, d)
	if err != nil {
		f.t.Fatal(err)
	}
	return p.CUID
}

func (f *fixture) settings(change account.SettingsChange) {
	f.t.Helper()
	if _, err := f.App.Deps().Settings.Change(context.Background(), f.acc.UserCUID, change); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) get(path string, header map[string]string) *testkit.Response {
	f.t.Helper()
	return f.Do(f.t, testkit.Request{Method: "GET", Path: path, Header: header})
}

// card fetches a preview and decodes it, failing unless it is a 1200×630 PNG.
func (f *fixture) card(id string) *image.NRGBA {
	f.t.Helper()
	resp := f.get("/api/og/"+id+".png", nil).Expect(f.t, http.StatusOK, "")
	if ct := resp.Header.Get("Content-Type"); ct != "image/png" {
		f.t.Fatalf("Content-Type = %q, want image/png", ct)
	}
	img, err := png.Decode(bytes.NewReader(resp.Body))
	if err != nil {
		f.t.Fatalf("decode png: %v", err)
	}
	if b := img.Bounds(); b != image.Rect(0, 0, 1200, 630) {
		f.t.Fatalf("bounds = %v, want 1200×630", b)
	}
	out := image.NewNRGBA(img.Bounds())
	for y := range 630 {
		for x := range 1200 {
			out.Set(x, y, img.At(x, y))
		}
	}
	return out
}

// metric reads a counter from the admin listener's /metrics.
func (f *fixture) metric(name string) float64 {
	f.t.Helper()
	resp := f.Admin(f.t, "/metrics")
	for line := range strings.SplitSeq(string(resp.Body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				f.t.Fatal(err)
			}
			return n
		}
	}
	f.t.Fatalf("metric %s not in /metrics", name)
	return 0
}

func lum(c color.NRGBA) float64 {
	return 0.2126*float64(c.R) + 0.7152*float64(c.G) + 0.0722*float64(c.B)
}

// colours counts the distinct colours in r.
func colours(img *image.NRGBA, r image.Rectangle) map[color.NRGBA]int {
	seen := map[color.NRGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			seen[img.NRGBAAt(x, y)]++
		}
	}
	return seen
}

func TestPreviewIsA1200x630PNGOfTheNote(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(note.Draft{Content: "# Body", Title: ptr("Notes on running Postgres in a small cluster"),
			Summary: ptr("Storage classes, backups that restore, and connection pooling.")})
		resp := f.get("/api/og/"+id+".png", nil).Expect(t, http.StatusOK, "")
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=60" {
			t.Errorf("Cache-Control = %q", cc)
		}
		if etag := resp.Header.Get("ETag"); len(etag) < 3 || etag[0] != '"' || resp.Header.Get("X-Robots-Tag") != "noindex" {
			t.Errorf("ETag %q, X-Robots-Tag %q", etag, resp.Header.Get("X-Robots-Tag"))
		}

		img := f.card(id)
		if n := len(colours(img, img.Rect)); n < 50 {
			t.Errorf("%d distinct colours: the card looks empty", n)
		}
		bg := img.NRGBAAt(corner.X, corner.Y)
		text := colours(img, textRegion)
		dark := 0
		for c, n := range text {
			if lum(c) < 80 {
				dark += n
			}
		}
		if text[bg] == 0 || dark < 2000 {
			t.Errorf("text region: %d background pixels, %d dark text pixels; want both", text[bg], dark)
		}
		if got, want := img.NRGBAAt(accentBar.X, accentBar.Y), (color.NRGBA{0x5b, 0x6e, 0xe1, 0xff}); got != want {
			t.Errorf("accent bar = %v, want the default accent %v", got, want)
		}

		t.Run("the owner's accent colour is drawn", func(t *testing.T) {
			f.settings(account.SettingsChange{AccentColor: new("#E4572E")})
			img := f.card(id)
			if got, want := img.NRGBAAt(accentBar.X, accentBar.Y), (color.NRGBA{0xe4, 0x57, 0x2e, 0xff}); got != want {
				t.Errorf("accent bar = %v, want %v", got, want)
			}
		})
		t.Run("an indexable owner's preview has no X-Robots-Tag", func(t *testing.T) {
			f.settings(account.SettingsChange{Indexable: new(true)})
			if tag := f.get("/api/og/"+id+".png", nil).Expect(t, http.StatusOK, "").Header.Get("X-Robots-Tag"); tag != "" {
				t.Errorf("X-Robots-Tag = %q", tag)
			}
		})
		t.Run("an untitled note is drawn with a title", func(t *testing.T) {
			untitled := f.card(f.publish(note.Draft{Content: "x"}))
			text := colours(untitled, textRegion)
			if len(text) < 10 {
				t.Errorf("untitled card has %d colours in the text region, want the placeholder title", len(text))
			}
		})
	})
}

func TestThemeSetsTheBackground(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(note.Draft{Content: "x", Title: ptr("Theme"), Summary: ptr("A summary")})
		for _, c := range []struct {
			theme string
			dark  bool
		}{{"system", false}, {"dark", true}, {"light", false}} {
			f.settings(account.SettingsChange{Theme: new(c.theme)})
			img := f.card(id)
			bg := lum(img.NRGBAAt(corner.X, corner.Y))
			if c.dark != (bg < 60) || !c.dark && bg < 200 {
				t.Errorf("theme %s: background luminance %.0f", c.theme, bg)
			}
			// The title is drawn in a colour that contrasts with the background.
			contrasting := 0
			for col, n := range colours(img, textRegion) {
				if (c.dark && lum(col) > 200) || (!c.dark && lum(col) < 60) {
					contrasting += n
				}
			}
			if contrasting < 1000 {
				t.Errorf("theme %s: %d text pixels contrast with the background", c.theme, contrasting)
			}
		}
	})
}

func TestAuthorIsDrawnOnlyWhenShown(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(note.Draft{Content: "x", Title: ptr("Byline")})
		shown := f.card(id)
		f.settings(account.SettingsChange{ShowAuthor: new(false)})
		hidden := f.card(id)
		if n := len(colours(hidden, authorRegion)); n != 1 {
			t.Errorf("show_author false: the author region has %d colours, want the band alone", n)
		}
		if n := len(colours(shown, authorRegion)); n < 5 {
			t.Errorf("show_author true: the author region has %d colours, want the name drawn", n)
		}
		f.settings(account.SettingsChange{ShowAuthor: new(true), Name: new("Grace Hopper")})
		renamed := f.card(id)
		if colourDiff(renamed, shown, authorRegion) == 0 {
			t.Error("a new name drew the same author")
		}
	})
}

func colourDiff(a, b *image.NRGBA, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.NRGBAAt(x, y) != b.NRGBAAt(x, y) {
				n++
			}
		}
	}
	return n
}

func TestExtremeTextStillDrawsACard(t *testing.T) {
	texts := map[string]string{
		"10,000-character title": strings.Repeat("lorem ipsum dolor ", 556)[:10000],
		"one 500-rune word":      strings.Repeat("Pneumonoultramicroscopic", 21)[:500],
		"CJK paragraph":          strings.Repeat("日本語の文章には空白がありません。中文段落也没有空格。", 20),
		"200 emoji":              strings.Repeat("😀👨‍👩‍👧‍👦🇩🇪👍🏽❤️‍🔥🏳️‍🌈👩🏿‍💻🇯🇵", 25),
		"right to left":          "שלום עולם, זהו טקסט בעברית. مرحبا بالعالم، هذا نص عربي. \u202eoverride\u202c",
		"combining marks":        "Cafe\u0301 Z̸̡̢̛̗̘̙̜̝̞̟̠̀́̂̃̄̅̆̇̈̉̊̋̌̍̎̏̐̑̒̓̔̕̚ algo" + strings.Repeat("\u0301", 300),
		"control characters":     "bell\a back\b esc\x1b[31mred\x1b[0m del\x7f c1\u0085\u009b",
		"replacement characters": "valid \ufffd\ufffd half \ufffd end",
		"empty":                  "",
		"whitespace only":        " \t\n\r\u00a0\u3000 ",
		"newlines":               "first line\nsecond line\r\n\r\nthird\n\n\n",
	}
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		f.settings(account.SettingsChange{Name: new(strings.Repeat("Wolfeschlegelsteinhausenbergerdorff ", 3)[:100])})
		for name, s := range texts {
			t.Run(name, func(t *testing.T) {
				f.t = t
				f.card(f.publish(note.Draft{Content: "x", Title: ptr(s), Summary: ptr(s)}))
			})
		}
		// Bytes Postgres cannot store are refused on every backend (the drawing of them is
		// tested in internal/ogcard).
		for name, s := range map[string]string{
			"invalid UTF-8 bytes": "valid \xff\xfe half \xe2\x82 end \xc0\xaf over\xf4\x90\x80\x80long",
			"NUL bytes":           "nul\x00nul\x00",
		} {
			t.Run(name, func(t *testing.T) {
				_, err := testkit.Must(f.App.Deps().Publisher()).Publish(context.Background(), f.acc.UserCUID, note.Draft{Content: "x", Title: ptr(s)})
				if !errors.Is(err, note.ErrInvalidText) {
					t.Errorf("publish = %v, want ErrInvalidText", err)
				}
			})
		}
	})
}

func TestCardIsDrawnOncePerChange(t *testing.T) {
	const renders = "sharenote_og_renders_total"
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(note.Draft{Content: "x", Title: ptr("Cached"), Summary: ptr("Once")})
		path := "/api/og/" + id + ".png"
		first := f.get(path, nil).Expect(t, http.StatusOK, "")
		second := f.get(path, nil).Expect(t, http.StatusOK, "")
		if n := f.metric(renders); n != 1 {
			t.Fatalf("after two reads %s = %v, want 1", renders, n)
		}
		if f.metric("sharenote_readcache_hits_total") < 1 {
			t.Error("the second read was not counted as a cache hit")
		}
		etag := first.Header.Get("ETag")
		if !bytes.Equal(first.Body, second.Body) || second.Header.Get("ETag") != etag {
			t.Error("the cached read differs from the first")
		}
		notModified := f.get(path, map[string]string{"If-None-Match": etag})
		if notModified.Status != http.StatusNotModified || len(notModified.Body) != 0 {
			t.Errorf("If-None-Match: %d with %d bytes, want 304 without a body", notModified.Status, len(notModified.Body))
		}

		title := "Changed"
		if _, err := testkit.Must(f.App.Deps().Publisher()).Update(context.Background(), f.acc.UserCUID, id,
			note.Patch{Title: note.Optional[string]{Set: true, Value: &title}}); err != nil {
			t.Fatal(err)
		}
		changed := f.get(path, nil).Expect(t, http.StatusOK, "")
		if n := f.metric(renders); n != 2 {
			t.Errorf("after an update %s = %v, want 2", renders, n)
		}
		if changed.Header.Get("ETag") == etag {
			t.Error("the ETag did not change with the title")
		}
		f.get(path, map[string]string{"If-None-Match": etag}).Expect(t, http.StatusOK, "")

		f.settings(account.SettingsChange{Theme: new("dark")})
		f.get(path, nil).Expect(t, http.StatusOK, "")
		if n := f.metric(renders); n != 3 {
			t.Errorf("after a theme change %s = %v, want 3", renders, n)
		}
		// indexable changes a header, not the picture.
		f.settings(account.SettingsChange{Indexable: new(true)})
		f.get(path, nil).Expect(t, http.StatusOK, "")
		if n := f.metric(renders); n != 3 {
			t.Errorf("after an indexable change %s = %v, want still 3", renders, n)
		}
	})
}

func TestConcurrentReadsDrawOnce(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(note.Draft{Content: "x", Title: ptr("Popular")})
		var wg sync.WaitGroup
		statuses := make([]int, 12)
		for i := range statuses {
			wg.Go(func() {
				resp, err := http.Get(f.URL + "/api/og/" + id + ".png")
				if err != nil {
					return
				}
				resp.Body.Close()
				statuses[i] = resp.StatusCode
			})
		}
		wg.Wait()
		for i, s := range statuses {
			if s != http.StatusOK {
				t.Errorf("request %d: status %d", i, s)
			}
		}
		if n := f.metric("sharenote_og_renders_total"); n != 1 {
			t.Errorf("%d concurrent reads drew %v times, want 1", len(statuses), n)
		}
	})
}

func TestMissingPreviewsAre404(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		id := f.publish(note.Draft{Content: "x", Title: ptr("Here")})
		expiring := f.publish(note.Draft{Content: "x", ExpiresAt: ptr(f.Clock.Now().Add(30 * time.Second))})
		gone := f.publish(note.Draft{Content: "x"})
		if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), f.acc.UserCUID, gone); err != nil {
			t.Fatal(err)
		}

		// Before expiry the preview may be cached only until the note expires.
		resp := f.get("/api/og/"+expiring+".png", nil).Expect(t, http.StatusOK, "")
		// The database keeps microseconds, so the time left is a hair under 30 s.
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=29" && cc != "public, max-age=30" {
			t.Errorf("Cache-Control of a note expiring in 30 s = %q", cc)
		}
		f.Clock.Advance(31 * time.Second)

		for name, file := range map[string]string{
			"unknown cuid":        "k3v9x2m0q8w1e7r4t6y5u2i0.png",
			"jpg instead of png":  id + ".jpg",
			"no extension":        id,
			"upper-case PNG":      id + ".PNG",
			"png twice":           id + ".png.png",
			"bad cuid":            "not-a-cuid.png",
			"upper-case cuid":     strings.ToUpper(id) + ".png",
			"only the extension":  ".png",
			"expired note":        expiring + ".png",
			"unpublished note":    gone + ".png",
			"escaped path":        "..%2f" + id + ".png",
			"invalid UTF-8 in it": "%ff%fe.png",
		} {
			t.Run(name, func(t *testing.T) {
				f.get("/api/og/"+file, nil).Expect(t, http.StatusNotFound, "not_found")
			})
		}
		if n := f.metric("sharenote_og_renders_total"); n != 1 {
			t.Errorf("%s = %v: a 404 drew a card", "sharenote_og_renders_total", n)
		}
	})
}

// A note without a summary shows its Obsidian description on its card, as on its page
// (docs/api.md "The note page"); a summary wins over it.
func TestCardShowsTheDescriptionWithoutASummary(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	const text = "What the note is about, in one line."
	described := f.card(f.publish(note.Draft{Content: "---\ndescription: " + text + "\n---\nx", Title: ptr("Card")}))
	summarized := f.card(f.publish(note.Draft{Content: "x", Title: ptr("Card"), Summary: ptr(text)}))
	bare := f.card(f.publish(note.Draft{Content: "x", Title: ptr("Card")}))
	both := f.card(f.publish(note.Draft{Content: "---\ndescription: Another line.\n---\nx", Title: ptr("Card"), Summary: ptr(text)}))
	if !bytes.Equal(described.Pix, summarized.Pix) || !bytes.Equal(both.Pix, summarized.Pix) {
		t.Error("the card of a described note differs from that of a note with the same summary")
	}
	if bytes.Equal(described.Pix, bare.Pix) {
		t.Error("the description is not drawn")
	}
}
