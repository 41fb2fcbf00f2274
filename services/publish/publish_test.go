package publish_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestMarkdownPublish(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "writer")
		rfc := f.clock.Now().Add(48 * time.Hour).Truncate(time.Second)
		day := f.clock.Now().AddDate(0, 0, 3)
		midnight := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
		cases := []struct {
			name   string
			body   string
			header map[string]string
			check  func(t *testing.T, p note.Publication)
		}{
			{"the body is stored as the content", "# Hello\n\nSome *text*.\n", nil, func(t *testing.T, p note.Publication) {
				if p.Content != "# Hello\n\nSome *text*.\n" || p.Title != nil || p.Summary != nil || p.Properties != nil ||
					!p.ShowProperties || p.ExpiresAt != nil {
					t.Errorf("stored %+v, want the body, no title, summary, properties or expiry, properties shown", p)
				}
			}},
			{"leading frontmatter becomes properties and is removed from the body",
				"---\ntags: [a, b]\ncount: 3\n---\n# Body\n", nil, func(t *testing.T, p note.Publication) {
					if p.Content != "# Body\n" {
						t.Errorf("content = %q, want the body without frontmatter", p.Content)
					}
					if got := jsonText(t, p.Properties); got != `{"count":3,"tags":["a","b"]}` {
						t.Errorf("properties = %s", got)
					}
				}},
			{"a frontmatter title becomes the title", "---\ntitle: From frontmatter\n---\ntext", nil, func(t *testing.T, p note.Publication) {
				if deref(p.Title) != "From frontmatter" || p.Content != "text" {
					t.Errorf("title = %s, content = %q", deref(p.Title), p.Content)
				}
			}},
			{"X-Summary is the summary", "x", map[string]string{"X-Summary": "A short summary"}, func(t *testing.T, p note.Publication) {
				if deref(p.Summary) != "A short summary" {
					t.Errorf("summary = %s", deref(p.Summary))
				}
			}},
			{"X-Expires-At takes RFC 3339", "x", map[string]string{"X-Expires-At": rfc.Format(time.RFC3339)}, func(t *testing.T, p note.Publication) {
				if p.ExpiresAt == nil || !p.ExpiresAt.Equal(rfc) {
					t.Errorf("expires_at = %v, want %v", p.ExpiresAt, rfc)
				}
			}},
			{"X-Expires-At takes a plain date meaning 00:00 UTC", "x", map[string]string{"X-Expires-At": day.Format("2006-01-02")},
				func(t *testing.T, p note.Publication) {
					if p.ExpiresAt == nil || !p.ExpiresAt.Equal(midnight) {
						t.Errorf("expires_at = %v, want %v", p.ExpiresAt, midnight)
					}
				}},
			{"X-Show-Properties false hides the properties", "---\na: 1\n---\nx", map[string]string{"X-Show-Properties": "false"},
				func(t *testing.T, p note.Publication) {
					if p.ShowProperties || jsonText(t, p.Properties) != `{"a":1}` {
						t.Errorf("show_properties = %v, properties %v; want false and kept", p.ShowProperties, p.Properties)
					}
				}},
			{"X-Show-Properties true shows the properties", "x", map[string]string{"X-Show-Properties": "true"}, func(t *testing.T, p note.Publication) {
				if !p.ShowProperties {
					t.Error("show_properties = false")
				}
			}},
			{"a charset parameter is accepted", "é", map[string]string{"Content-Type": "text/markdown; charset=utf-8"}, func(t *testing.T, p note.Publication) {
				if p.Content != "é" {
					t.Errorf("content = %q", p.Content)
				}
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				id := f.published(t, f.markdown(t, acc.Token, c.body, c.header))
				p := f.stored(t, id)
				if p.AccountCUID != acc.UserCUID {
					t.Errorf("owner = %s, want %s", p.AccountCUID, acc.UserCUID)
				}
				c.check(t, p)
			})
		}
	})
}

func TestPublishingTwiceCreatesTwoPublications(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "writer")
		first := f.published(t, f.markdown(t, acc.Token, "# Same", nil))
		second := f.published(t, f.markdown(t, acc.Token, "# Same", nil))
		if first == second {
			t.Fatalf("both publishes returned %s", first)
		}
		if f.stored(t, first).Content != "# Same" || f.stored(t, second).Content != "# Same" {
			t.Error("the two publications do not both hold the content")
		}
		if n := f.rows(t, "publications", &acc); n != 2 {
			t.Errorf("%d publications stored, want 2", n)
		}
	})
}

func TestJSONPublish(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "writer")
		expiry := f.clock.Now().Add(72 * time.Hour).Truncate(time.Millisecond)
		cases := []struct {
			name  string
			body  string
			check func(t *testing.T, p note.Publication)
		}{
			{"content alone is a note with properties shown by default", `{"content":"# Hi"}`, func(t *testing.T, p note.Publication) {
				if p.Content != "# Hi" || p.Title != nil || p.Summary != nil || p.Properties != nil || !p.ShowProperties || p.ExpiresAt != nil {
					t.Errorf("stored %+v", p)
				}
			}},
			{"title, summary, properties and expires_at are stored",
				`{"content":"x","title":"T","summary":"S","properties":{"tags":["a"],"n":1.5},"expires_at":"` + expiry.Format(time.RFC3339Nano) + `"}`,
				func(t *testing.T, p note.Publication) {
					if deref(p.Title) != "T" || deref(p.Summary) != "S" || jsonText(t, p.Properties) != `{"n":1.5,"tags":["a"]}` ||
						p.ExpiresAt == nil || !p.ExpiresAt.Equal(expiry) {
						t.Errorf("stored title %s summary %s properties %v expires %v", deref(p.Title), deref(p.Summary), p.Properties, p.ExpiresAt)
					}
				}},
			{"expires_at takes a plain date", `{"content":"x","expires_at":"` + f.clock.Now().AddDate(1, 0, 0).Format("2006-01-02") + `"}`,
				func(t *testing.T, p note.Publication) {
					if p.ExpiresAt == nil || p.ExpiresAt.Hour() != 0 || p.ExpiresAt.Minute() != 0 || p.ExpiresAt.Location() != time.UTC {
						t.Errorf("expires_at = %v, want 00:00 UTC", p.ExpiresAt)
					}
				}},
			{"show_properties false is honoured", `{"content":"x","show_properties":false}`, func(t *testing.T, p note.Publication) {
				if p.ShowProperties {
					t.Error("show_properties = true")
				}
			}},
			{"request properties are merged over frontmatter, the request winning per key",
				`{"content":"---\na: fm\nb: fm\n---\nbody","properties":{"b":"request","c":"request"}}`, func(t *testing.T, p note.Publication) {
					if got := jsonText(t, p.Properties); got != `{"a":"fm","b":"request","c":"request"}` || p.Content != "body" {
						t.Errorf("properties = %s, content %q", got, p.Content)
					}
				}},
			{"an explicit title wins over the frontmatter title", `{"content":"---\ntitle: FM\n---\nx","title":"Explicit"}`,
				func(t *testing.T, p note.Publication) {
					if deref(p.Title) != "Explicit" {
						t.Errorf("title = %s", deref(p.Title))
					}
				}},
			{"the frontmatter title is the title when none is given", `{"content":"---\ntitle: FM\n---\nx"}`, func(t *testing.T, p note.Publication) {
				if deref(p.Title) != "FM" {
					t.Errorf("title = %s", deref(p.Title))
				}
			}},
			{"unknown fields are ignored", `{"content":"x","colour":"blue","nested":{"a":[1]},"title":"T"}`, func(t *testing.T, p note.Publication) {
				if p.Content != "x" || deref(p.Title) != "T" || p.Properties != nil {
					t.Errorf("stored %+v", p)
				}
			}},
			{"null properties are none", `{"content":"x","properties":null}`, func(t *testing.T, p note.Publication) {
				if p.Properties != nil {
					t.Errorf("properties = %v", p.Properties)
				}
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				c.check(t, f.stored(t, f.published(t, f.json(t, acc.Token, c.body))))
			})
		}
	})
}

func TestMultipartPublishWithImages(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "writer")
		pngData, jpegData, spaced := testkit.PNG(t), testkit.JPEG(t), testkit.PNGOfSize(t, 300)
		expiry := f.clock.Now().Add(24 * time.Hour).Truncate(time.Second)
		content := "---\ntitle: From frontmatter\ntags: [x]\n---\n" +
			"Plain [[a.png]], embedded ![[b.jpg]], missing [[c.png]] and ![[d.gif]], spaced ![[my photo.png]]."

		id := f.published(t, f.multipart(t, acc.Token,
			field("content", content),
			field("title", "Explicit"),
			field("summary", "Sum"),
			field("show_properties", "false"),
			field("expires_at", expiry.Format(time.RFC3339)),
			field("properties", `{"tags":["y"],"extra":1}`),
			file("a.png", "image/png", pngData),
			file("b.jpg", "image/jpeg", jpegData),
			file("my photo.png", "image/png", spaced),
		))

		base := f.URL + "/api/images/" + acc.UserCUID + "/" + id + "/"
		p := f.stored(t, id)
		want := "Plain " + base + "a.png, embedded ![b.jpg](" + base + "b.jpg), missing [[c.png]] and ![[d.gif]], spaced ![my photo.png](" +
			base + "my%20photo.png)."
		if p.Content != want {
			t.Errorf("content =\n%s\nwant\n%s", p.Content, want)
		}
		if deref(p.Title) != "Explicit" || deref(p.Summary) != "Sum" || p.ShowProperties ||
			p.ExpiresAt == nil || !p.ExpiresAt.Equal(expiry) {
			t.Errorf("title %s summary %s show_properties %v expires %v", deref(p.Title), deref(p.Summary), p.ShowProperties, p.ExpiresAt)
		}
		if got := jsonText(t, p.Properties); got != `{"extra":1,"tags":["y"],"title":"From frontmatter"}` {
			t.Errorf("properties = %s", got)
		}
		if got, want := f.usage(t, acc), int64(len(pngData)+len(jpegData)+len(spaced)); got != want {
			t.Errorf("image_bytes_used = %d, want %d (the sum of the image sizes)", got, want)
		}

		// Each image is stored under the filename its URL names once unescaped.
		for _, img := range []struct {
			escaped, mediaType string
			data               []byte
		}{{"a.png", "image/png", pngData}, {"b.jpg", "image/jpeg", jpegData}, {"my%20photo.png", "image/png", spaced}} {
			name, err := url.PathUnescape(img.escaped)
			if err != nil {
				t.Fatal(err)
			}
			iv, err := testkit.Must(f.App.Deps().Images()).ReadImage(context.Background(), acc.UserCUID, id, name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			stored, data := iv.Image, f.readBack(t, acc, id, name)
			if !bytes.Equal(data, img.data) || stored.MediaType != img.mediaType || stored.Size != int64(len(img.data)) {
				t.Errorf("%s: %d bytes of %s, want the %d uploaded bytes of %s", name, len(data), stored.MediaType, len(img.data), img.mediaType)
			}
		}
	})
}

func TestMultipartFields(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "writer")
		date := f.clock.Now().AddDate(0, 1, 0).Format("2006-01-02")
		cases := []struct {
			name  string
			parts []part
			check func(t *testing.T, p note.Publication)
		}{
			{"content alone: properties shown, no images needed", []part{field("content", "# Only")}, func(t *testing.T, p note.Publication) {
				if p.Content != "# Only" || !p.ShowProperties || p.Title != nil {
					t.Errorf("stored %+v", p)
				}
			}},
			{"the frontmatter title is the title when no title field is sent", []part{field("content", "---\ntitle: FM\n---\nx")},
				func(t *testing.T, p note.Publication) {
					if deref(p.Title) != "FM" || p.Content != "x" {
						t.Errorf("title %s content %q", deref(p.Title), p.Content)
					}
				}},
			{"expires_at takes a plain date", []part{field("content", "x"), field("expires_at", date)}, func(t *testing.T, p note.Publication) {
				if p.ExpiresAt == nil || p.ExpiresAt.Format("2006-01-02T15:04:05Z07:00") != date+"T00:00:00Z" {
					t.Errorf("expires_at = %v, want %s 00:00 UTC", p.ExpiresAt, date)
				}
			}},
			{"show_properties true", []part{field("content", "x"), field("show_properties", "true")}, func(t *testing.T, p note.Publication) {
				if !p.ShowProperties {
					t.Error("show_properties = false")
				}
			}},
			{"GIF and WebP images are accepted", []part{field("content", "![[g.gif]] ![[w.webp]]"),
				file("g.gif", "image/gif", testkit.GIF(t)), file("w.webp", "image/webp", testkit.WebP())}, func(t *testing.T, p note.Publication) {
				if strings.Contains(p.Content, "[[") {
					t.Errorf("content = %q, want both references replaced", p.Content)
				}
			}},
			{"extensions are case-insensitive and image/jpg is taken for JPEG", []part{field("content", "[[A.PNG]] [[b.JPEG]]"),
				file("A.PNG", "image/png", testkit.PNG(t)), file("b.JPEG", "image/jpg", testkit.JPEG(t))}, func(t *testing.T, p note.Publication) {
				if strings.Contains(p.Content, "[[") {
					t.Errorf("content = %q, want both references replaced", p.Content)
				}
				iv, err := testkit.Must(f.App.Deps().Images()).ReadImage(context.Background(), p.AccountCUID, p.CUID, "b.JPEG")
				if err != nil || iv.Image.MediaType != "image/jpeg" {
					t.Errorf("b.JPEG stored as %q (%v), want the canonical image/jpeg", iv.Image.MediaType, err)
				}
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				c.check(t, f.stored(t, f.published(t, f.multipart(t, acc.Token, c.parts...))))
			})
		}
	})
}

// send is one way of sending a publish request with a token.
type send func(t *testing.T, f *fixture, token string) *testkit.Response

func md(body string, header map[string]string) send {
	return func(t *testing.T, f *fixture, token string) *testkit.Response {
		return f.markdown(t, token, body, header)
	}
}

func js(body string) send {
	return func(t *testing.T, f *fixture, token string) *testkit.Response { return f.json(t, token, body) }
}

func mp(parts ...part) send {
	return func(t *testing.T, f *fixture, token string) *testkit.Response { return f.multipart(t, token, parts...) }
}

// raw sends body with exactly the given Content-Type ("" sends none).
func raw(contentType, body string) send {
	return func(t *testing.T, f *fixture, token string) *testkit.Response {
		return f.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Body: []byte(body), ContentType: contentType, Token: token})
	}
}

// withImage is a multipart note referencing one image part.
func withImage(img part) send {
	return mp(field("content", "![["+img.name+"]]"), img)
}

func TestPublishRejectsBadRequests(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		png, jpg := testkit.PNG(t), testkit.JPEG(t)
		past := f.clock.Now().Add(-time.Minute).Format(time.RFC3339)
		yesterday := f.clock.Now().AddDate(0, 0, -1).Format("2006-01-02")
		broken := func(body string) send { return raw("multipart/form-data; boundary=b0undary", body) }
		cases := []struct {
			name string
			send send
			code string
		}{
			{"text/plain is not a publish format", raw("text/plain", "# x"), "unsupported_content_type"},
			{"a missing Content-Type is not a publish format", raw("", "# x"), "unsupported_content_type"},
			{"a form-urlencoded body is not a publish format", raw("application/x-www-form-urlencoded", "content=x"), "unsupported_content_type"},
			{"a malformed Content-Type is not a publish format", raw("text/markdown; =", "x"), "unsupported_content_type"},

			{"Markdown that is not UTF-8 is an invalid body", md("\xff\xfe", nil), "invalid_body"},
			{"invalid frontmatter YAML is invalid properties", md("---\na: [1, 2\n---\nx", nil), "invalid_properties"},
			{"frontmatter that is a list is invalid properties", md("---\n- a\n- b\n---\nx", nil), "invalid_properties"},
			{"frontmatter that is a single value is invalid properties", md("---\njust text\n---\nx", nil), "invalid_properties"},
			{"X-Expires-At in the past is an invalid field", md("x", map[string]string{"X-Expires-At": past}), "invalid_field"},
			{"X-Expires-At yesterday is an invalid field", md("x", map[string]string{"X-Expires-At": yesterday}), "invalid_field"},
			{"X-Expires-At that is not a date is an invalid field", md("x", map[string]string{"X-Expires-At": "next week"}), "invalid_field"},
			{"X-Show-Properties yes is an invalid field", md("x", map[string]string{"X-Show-Properties": "yes"}), "invalid_field"},

			{"JSON without content is an invalid field", js(`{"title":"T"}`), "invalid_field"},
			{"JSON content null is an invalid field", js(`{"content":null}`), "invalid_field"},
			{"JSON content that is a number is an invalid field", js(`{"content":5}`), "invalid_field"},
			{"JSON title null is an invalid field: a publish has nothing to clear", js(`{"content":"x","title":null}`), "invalid_field"},
			{"JSON show_properties null is an invalid field", js(`{"content":"x","show_properties":null}`), "invalid_field"},
			{"JSON title that is a number is an invalid field", js(`{"content":"x","title":5}`), "invalid_field"},
			{"JSON summary that is a boolean is an invalid field", js(`{"content":"x","summary":true}`), "invalid_field"},
			{"JSON show_properties that is a string is an invalid field", js(`{"content":"x","show_properties":"false"}`), "invalid_field"},
			{"JSON expires_at that is a number is an invalid field", js(`{"content":"x","expires_at":1893456000}`), "invalid_field"},
			{"JSON expires_at in the past is an invalid field", js(`{"content":"x","expires_at":"` + past + `"}`), "invalid_field"},
			{"JSON expires_at that is not a date is an invalid field", js(`{"content":"x","expires_at":"2030-13-45"}`), "invalid_field"},
			{"JSON properties that are an array are invalid properties", js(`{"content":"x","properties":["a"]}`), "invalid_properties"},
			{"JSON properties that are a string are invalid properties", js(`{"content":"x","properties":"a: b"}`), "invalid_properties"},
			{"JSON properties that are a number are invalid properties", js(`{"content":"x","properties":3}`), "invalid_properties"},
			{"JSON content with invalid frontmatter is invalid properties", js(`{"content":"---\n[a\n---\nx"}`), "invalid_properties"},
			{"malformed JSON is an invalid body", js(`{"content":"x"`), "invalid_body"},
			{"two JSON values are an invalid body", js(`{"content":"x"} {}`), "invalid_body"},
			{"a JSON array is an invalid body", js(`[{"content":"x"}]`), "invalid_body"},

			{"multipart without content is an invalid field", mp(field("title", "T")), "invalid_field"},
			{"multipart show_properties yes is an invalid field", mp(field("content", "x"), field("show_properties", "yes")), "invalid_field"},
			{"multipart expires_at in the past is an invalid field", mp(field("content", "x"), field("expires_at", past)), "invalid_field"},
			{"multipart expires_at that is not a date is an invalid field", mp(field("content", "x"), field("expires_at", "soon")), "invalid_field"},
			{"multipart properties that are not JSON are invalid properties", mp(field("content", "x"), field("properties", "a: b")), "invalid_properties"},
			{"multipart properties that are an array are invalid properties", mp(field("content", "x"), field("properties", `["a"]`)), "invalid_properties"},
			{"multipart frontmatter that is a list is invalid properties", mp(field("content", "---\n- a\n---\nx")), "invalid_properties"},

			{"a .bmp image is an invalid image", withImage(file("a.bmp", "image/bmp", []byte("BM\x3a\x00\x00\x00\x00\x00\x00\x00"))), "invalid_image"},
			{"an .svg image is an invalid image", withImage(file("a.svg", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))), "invalid_image"},
			{"an image without an extension is an invalid image", withImage(file("picture", "image/png", png)), "invalid_image"},
			{"a declared type not matching the extension is an invalid image", withImage(file("a.png", "image/jpeg", png)), "invalid_image"},
			{"a missing declared type is an invalid image", withImage(file("a.png", "", png)), "invalid_image"},
			{"a PNG name with JPEG bytes is an invalid image", withImage(file("a.png", "image/png", jpg)), "invalid_image"},
			{"a GIF name with PNG bytes is an invalid image", withImage(file("a.gif", "image/gif", png)), "invalid_image"},
			{"a WebP name with other RIFF bytes is an invalid image", withImage(file("a.webp", "image/webp", []byte("RIFF\x04\x00\x00\x00AVI LIST"))), "invalid_image"},
			{"a filename with a slash is an invalid image", withImage(file("dir/a.png", "image/png", png)), "invalid_image"},
			{"a filename with a backslash is an invalid image", withImage(file(`dir\a.png`, "image/png", png)), "invalid_image"},
			{"a filename climbing with .. is an invalid image", withImage(file("../a.png", "image/png", png)), "invalid_image"},
			{"a filename containing .. is an invalid image", withImage(file("a..png", "image/png", png)), "invalid_image"},
			{"a filename with a tab is an invalid image", withImage(file("a\tb.png", "image/png", png)), "invalid_image"},
			{"a filename with NUL (RFC 2231 encoded) is an invalid image", withImage(part{name: "a\x00b.png", contentType: "image/png", data: png,
				disposition: `form-data; name*=UTF-8''a%00b.png; filename*=UTF-8''a%00b.png`}), "invalid_image"},
			{"a filename with a control character (RFC 2231 encoded) is an invalid image", withImage(part{name: "a\x07b.png", contentType: "image/png",
				data: png, disposition: `form-data; name*=UTF-8''a%07b.png; filename*=UTF-8''a%07b.png`}), "invalid_image"},
			{"the same filename twice is an invalid image", mp(field("content", "[[a.png]]"), file("a.png", "image/png", png),
				file("a.png", "image/png", png)), "invalid_image"},

			{"multipart without a boundary is an invalid body", raw("multipart/form-data", "--x\r\n\r\n--x--\r\n"), "invalid_body"},
			{"a multipart body with no boundary line is an invalid body", broken("content=hello\r\nnot a multipart body\r\n"), "invalid_body"},
			{"a multipart body cut inside a part is an invalid body", broken("--b0undary\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\nhel"), "invalid_body"},
			{"a multipart body cut inside part headers is an invalid body", broken("--b0undary\r\nContent-Disposition: form-da"), "invalid_body"},
			{"a multipart body without its close delimiter is an invalid body",
				broken("--b0undary\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\nhello\r\n--b0undary"), "invalid_body"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				// Each case has its own account, so that the per-account mutation limit
				// cannot interfere and "stored nothing" is exact.
				acc := f.NewAccount(t, "rejected")
				c.send(t, f, acc.Token).Expect(t, http.StatusBadRequest, c.code)
				f.storedNothing(t, acc)
			})
		}
	})
}

func TestPublishNeedsAValidToken(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		cases := []struct{ name, authorization string }{
			{"no Authorization header", ""},
			{"an unknown bearer token", "Bearer snt_not-a-real-token"},
			{"an empty bearer token", "Bearer "},
			{"another scheme", "Basic dXNlcjpwYXNz"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				header := map[string]string{}
				if c.authorization != "" {
					header["Authorization"] = c.authorization
				}
				f.markdown(t, "", "# x", header).Expect(t, http.StatusUnauthorized, "unauthorized")
			})
		}
		if n := f.rows(t, "publications", nil); n != 0 {
			t.Errorf("%d publications stored, want none", n)
		}
	})
}
