package images_test

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/images"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// Only the images target is mounted; notes with images are published through the domain,
// as the publish target does, because a target imports no other target, its tests neither.
var targets = []app.Target{images.Target, testkit.Arranger}

// fixture is a server with an injected clock.
type fixture struct {
	*testkit.Server
	clock *testkit.Clock
}

func start(t *testing.T, b testkit.Backend) *fixture {
	t.Helper()
	clock := testkit.NewClock()
	return &fixture{Server: testkit.StartServer(t, b, targets, testkit.WithClock(clock)), clock: clock}
}

// embed matches the link the publish use case writes for ![[name]].
var embed = regexp.MustCompile(`!\[[^\]]*\]\(([^)]+)\)`)

// image is an image a test uploads.
type image struct {
	Filename, MediaType string
	Data                []byte
}

// publish stores a note embedding every image and returns it with the image paths (the
// image URLs its content holds, without the base URL), in upload order.
func (f *fixture) publish(t *testing.T, acc testkit.Account, expires *time.Time, imgs ...image) (note.Publication, []string) {
	t.Helper()
	var content strings.Builder
	for _, img := range imgs {
		content.WriteString("![[" + img.Filename + "]]\n")
	}
	notes := testkit.Must(f.App.Deps().Publisher())
	up := notes.NewUpload(acc.UserCUID)
	for _, img := range imgs {
		if err := up.Add(context.Background(), img.Filename, img.MediaType, bytes.NewReader(img.Data)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := notes.Publish(context.Background(), acc.UserCUID,
		note.Draft{Content: content.String(), ShowProperties: true, ExpiresAt: expires, Upload: up})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, m := range embed.FindAllStringSubmatch(p.Content, -1) {
		u, ok := strings.CutPrefix(m[1], f.URL)
		if !ok {
			t.Fatalf("image URL %s is not under %s", m[1], f.URL)
		}
		paths = append(paths, u)
	}
	if len(paths) != len(imgs) {
		t.Fatalf("content %q holds %d image URLs, want %d", p.Content, len(paths), len(imgs))
	}
	return p, paths
}

func (f *fixture) get(t *testing.T, path string, header map[string]string) *testkit.Response {
	t.Helper()
	return f.Do(t, testkit.Request{Method: "GET", Path: path, Header: header})
}

func (f *fixture) usage(t *testing.T, acc testkit.Account) int64 {
	t.Helper()
	p, err := f.App.Deps().Settings.Get(context.Background(), acc.UserCUID)
	if err != nil {
		t.Fatal(err)
	}
	return p.Storage.ImageBytesUsed
}

// cacheAge checks Cache-Control: public, max-age=N with N at most 60, and returns N.
func cacheAge(t *testing.T, resp *testkit.Response) int {
	t.Helper()
	n := int(resp.MaxAge(t) / time.Second)
	if n > 60 {
		t.Errorf("max-age = %d, want at most 60", n)
	}
	return n
}

func TestImageIsServedAsUploaded(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		cases := []struct {
			name, filename, mediaType string
			data                      []byte
		}{
			{"a PNG is served as image/png", "a.png", "image/png", testkit.PNG(t)},
			{"a JPEG is served as image/jpeg", "b.jpg", "image/jpeg", testkit.JPEG(t)},
			{"a GIF is served as image/gif", "d.gif", "image/gif", testkit.GIF(t)},
			{"a WebP is served as image/webp", "e.webp", "image/webp", testkit.WebP()},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, paths := f.publish(t, acc, nil, image{Filename: c.filename, MediaType: c.mediaType, Data: c.data})
				resp := f.get(t, paths[0], nil).Expect(t, http.StatusOK, "")
				if !bytes.Equal(resp.Body, c.data) {
					t.Errorf("body is %d bytes, want the %d uploaded bytes", len(resp.Body), len(c.data))
				}
				if ct := resp.Header.Get("Content-Type"); ct != c.mediaType {
					t.Errorf("Content-Type = %q, want %q", ct, c.mediaType)
				}
				if v := resp.Header.Get("X-Content-Type-Options"); v != "nosniff" {
					t.Errorf("X-Content-Type-Options = %q, want nosniff", v)
				}
				if v := resp.Header.Get("X-Robots-Tag"); v != "noindex" {
					t.Errorf("X-Robots-Tag = %q, want noindex (the default settings are not indexable)", v)
				}
				if age := cacheAge(t, resp); age < 1 {
					t.Errorf("max-age = %d for a note that never expires", age)
				}
				etag := resp.Header.Get("ETag")
				if !regexp.MustCompile(`^"[^"]+"$`).MatchString(etag) {
					t.Fatalf("ETag = %q, want a strong (quoted, not W/) tag", etag)
				}

				for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
					resp := f.get(t, paths[0], map[string]string{"If-None-Match": inm}).Expect(t, http.StatusNotModified, "")
					if len(resp.Body) != 0 {
						t.Errorf("If-None-Match %s: 304 with a %d-byte body", inm, len(resp.Body))
					}
					if resp.Header.Get("ETag") != etag {
						t.Errorf("If-None-Match %s: 304 ETag = %q, want %q", inm, resp.Header.Get("ETag"), etag)
					}
					cacheAge(t, resp)
				}
				if resp := f.get(t, paths[0], map[string]string{"If-None-Match": `"stale"`}).Expect(t, http.StatusOK, ""); !bytes.Equal(resp.Body, c.data) {
					t.Error("a non-matching If-None-Match did not get the image")
				}
			})
		}
	})
}

func TestEscapedFilenamesAreReadableAtTheirURL(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		cases := []struct{ filename, escaped string }{
			{"my photo.png", "my%20photo.png"},
			// Not "#": in a reference it starts an anchor, as Obsidian, which allows no "#"
			// in a file name, reads it.
			{"ünï 1?.png", "%C3%BCn%C3%AF%201%3F.png"},
			{"100%.png", "100%25.png"},
		}
		for _, c := range cases {
			t.Run(c.filename, func(t *testing.T) {
				data := testkit.PNG(t)
				p, paths := f.publish(t, acc, nil, image{Filename: c.filename, MediaType: "image/png", Data: data})
				if want := "/api/images/" + acc.UserCUID + "/" + p.CUID + "/" + c.escaped; paths[0] != want {
					t.Errorf("URL path = %s, want %s", paths[0], want)
				}
				if resp := f.get(t, paths[0], nil).Expect(t, http.StatusOK, ""); !bytes.Equal(resp.Body, data) {
					t.Error("the image is not served at its escaped URL")
				}
			})
		}
	})
}

func TestImageCacheAgeIsBoundedByExpiry(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		expires := f.clock.Now().Add(30 * time.Second)
		_, paths := f.publish(t, acc, &expires, image{Filename: "a.png", MediaType: "image/png", Data: testkit.PNG(t)})

		resp := f.get(t, paths[0], nil).Expect(t, http.StatusOK, "")
		if age := cacheAge(t, resp); age > 30 {
			t.Errorf("max-age = %d with 30 s left before expiry, want at most 30", age)
		}
		f.clock.Advance(25 * time.Second)
		resp = f.get(t, paths[0], nil).Expect(t, http.StatusOK, "")
		if age := cacheAge(t, resp); age > 5 {
			t.Errorf("max-age = %d with 5 s left before expiry, want at most 5", age)
		}
		resp = f.get(t, paths[0], map[string]string{"If-None-Match": resp.Header.Get("ETag")}).Expect(t, http.StatusNotModified, "")
		if age := cacheAge(t, resp); age > 5 {
			t.Errorf("304 max-age = %d with 5 s left before expiry, want at most 5", age)
		}
	})
}

func TestIndexableOwnerDropsNoindex(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		_, paths := f.publish(t, acc, nil, image{Filename: "a.png", MediaType: "image/png", Data: testkit.PNG(t)})
		if _, err := f.App.Deps().Settings.Change(context.Background(), acc.UserCUID,
			account.SettingsChange{Indexable: new(true)}); err != nil {
			t.Fatal(err)
		}
		if v := f.get(t, paths[0], nil).Expect(t, http.StatusOK, "").Header.Get("X-Robots-Tag"); v != "" {
			t.Errorf("X-Robots-Tag = %q, want none for an indexable owner", v)
		}
	})
}

func TestUnavailableImagesAreNotFound(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		owner, other := f.NewAccount(t, "owner"), f.NewAccount(t, "other")
		ctx := context.Background()
		png := image{Filename: "a.png", MediaType: "image/png", Data: testkit.PNG(t)}
		active, _ := f.publish(t, owner, nil, png)
		plain, _ := f.publish(t, owner, nil)
		others, _ := f.publish(t, other, nil, png)
		soon := f.clock.Now().Add(time.Minute)
		_, expiringPaths := f.publish(t, owner, &soon, png)
		unpublished, unpublishedPaths := f.publish(t, owner, nil, png)
		path := func(user, noteCUID, filename string) string {
			return "/api/images/" + user + "/" + noteCUID + "/" + filename
		}
		f.get(t, path(owner.UserCUID, active.CUID, "a.png"), nil).Expect(t, http.StatusOK, "")

		cases := []struct {
			name    string
			prepare func(t *testing.T) string
		}{
			{"an unknown filename", func(*testing.T) string { return path(owner.UserCUID, active.CUID, "b.png") }},
			{"a filename differing only in case", func(*testing.T) string { return path(owner.UserCUID, active.CUID, "A.png") }},
			{"an unknown note", func(*testing.T) string { return path(owner.UserCUID, cuid.New(), "a.png") }},
			{"a note without images", func(*testing.T) string { return path(owner.UserCUID, plain.CUID, "a.png") }},
			{"another account's user cuid for a real note and filename", func(*testing.T) string {
				return path(other.UserCUID, active.CUID, "a.png")
			}},
			{"the owner's user cuid for another account's note", func(*testing.T) string {
				return path(owner.UserCUID, others.CUID, "a.png")
			}},
			{"an unknown user cuid", func(*testing.T) string { return path(cuid.New(), active.CUID, "a.png") }},
			{"a malformed user cuid", func(*testing.T) string { return path("not-a-cuid", active.CUID, "a.png") }},
			{"an upper-case user cuid", func(*testing.T) string { return path(strings.ToUpper(owner.UserCUID), active.CUID, "a.png") }},
			{"a malformed note cuid", func(*testing.T) string { return path(owner.UserCUID, active.CUID[:23], "a.png") }},
			{"a note cuid with a character outside [a-z0-9]", func(*testing.T) string {
				return path(owner.UserCUID, "_"+active.CUID[1:], "a.png")
			}},
			{"a filename that could never be uploaded", func(*testing.T) string { return path(owner.UserCUID, active.CUID, "a..png") }},
			{"an unpublished note's image", func(t *testing.T) string {
				f.get(t, unpublishedPaths[0], nil).Expect(t, http.StatusOK, "")
				if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(ctx, owner.UserCUID, unpublished.CUID); err != nil {
					t.Fatal(err)
				}
				return unpublishedPaths[0]
			}},
			{"an expired note's image", func(t *testing.T) string {
				f.get(t, expiringPaths[0], nil).Expect(t, http.StatusOK, "")
				f.clock.Advance(time.Minute) // Exactly at expires_at the note is expired.
				return expiringPaths[0]
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				resp := f.get(t, c.prepare(t), nil).Expect(t, http.StatusNotFound, "not_found")
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("Content-Type = %q, want JSON", ct)
				}
			})
		}
		// The active image is untouched by all of the above.
		f.get(t, path(owner.UserCUID, active.CUID, "a.png"), nil).Expect(t, http.StatusOK, "")
	})
}

func TestImageRouteAllowsOnlyGETAndHEAD(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		_, paths := f.publish(t, acc, nil, image{Filename: "a.png", MediaType: "image/png", Data: testkit.PNG(t)})
		for _, method := range []string{"POST", "PUT", "DELETE"} {
			resp := f.Do(t, testkit.Request{Method: method, Path: paths[0]}).Expect(t, http.StatusMethodNotAllowed, "method_not_allowed")
			if allow := resp.Header.Get("Allow"); allow != "GET, HEAD" {
				t.Errorf("%s: Allow = %q, want GET, HEAD", method, allow)
			}
		}
	})
}

func TestImageBytesCountUntilUnpublish(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		ctx := context.Background()
		a1, a2, kept := testkit.PNGOfSize(t, 1_000), testkit.JPEG(t), testkit.GIF(t)
		soon := f.clock.Now().Add(time.Hour)
		expiring, expiringPaths := f.publish(t, acc, &soon,
			image{Filename: "a1.png", MediaType: "image/png", Data: a1},
			image{Filename: "a2.jpg", MediaType: "image/jpeg", Data: a2})
		lasting, lastingPaths := f.publish(t, acc, nil, image{Filename: "k.gif", MediaType: "image/gif", Data: kept})
		expect := func(t *testing.T, want int64, when string) {
			t.Helper()
			if got := f.usage(t, acc); got != want {
				t.Errorf("%s: image_bytes_used = %d, want %d", when, got, want)
			}
		}
		all := int64(len(a1) + len(a2) + len(kept))
		expect(t, all, "while active")

		f.clock.Advance(2 * time.Hour)
		for _, p := range expiringPaths {
			f.get(t, p, nil).Expect(t, http.StatusNotFound, "not_found")
		}
		f.get(t, lastingPaths[0], nil).Expect(t, http.StatusOK, "")
		expect(t, all, "while expired")

		if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(ctx, acc.UserCUID, expiring.CUID); err != nil {
			t.Fatal(err)
		}
		expect(t, int64(len(kept)), "right after unpublishing the expired note")
		if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(ctx, acc.UserCUID, lasting.CUID); err != nil {
			t.Fatal(err)
		}
		expect(t, 0, "right after unpublishing the active note")
		f.get(t, lastingPaths[0], nil).Expect(t, http.StatusNotFound, "not_found")
	})
}
