package publish_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit"
)

const (
	jsonLimit      = 2_000_000
	multipartLimit = 25_000_000
	noteLimit      = 1_900_000
	imageLimit     = 5 * 1024 * 1024
)

func TestPublishTooLarge(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		jsonBody := func(content string) string { return `{"content":"` + content + `"}` }
		streamed := func(parts ...part) send {
			return func(t *testing.T, f *fixture, token string) *testkit.Response {
				body, contentType := multipartBody(t, parts...)
				return f.stream(t, token, contentType, body)
			}
		}
		// Images of 5,000,000 bytes are each under 5 MiB; five of them are over 25,000,000.
		underLimitImages := func(n int) []part {
			parts := []part{field("content", "x")}
			for i := range n {
				parts = append(parts, file(fmt.Sprintf("i%d.png", i), "image/png", testkit.PNGOfSize(t, 5_000_000)))
			}
			return parts
		}
		// Thirteen text fields just under the field limit are together over 25,000,000.
		bigFields := func() []part {
			parts := []part{field("content", "x")}
			for i := range 13 {
				parts = append(parts, field(fmt.Sprintf("f%d", i), strings.Repeat("a", jsonLimit-1000)))
			}
			return parts
		}
		cases := []struct {
			name string
			send send
			code string
		}{
			{"a JSON body over 2,000,000 bytes", js(jsonBody(strings.Repeat("a", jsonLimit))), "payload_too_large"},
			{"a streamed JSON body over 2,000,000 bytes", func(t *testing.T, f *fixture, token string) *testkit.Response {
				return f.stream(t, token, "application/json", []byte(jsonBody(strings.Repeat("a", jsonLimit))))
			}, "payload_too_large"},
			{"a Markdown body over 2,000,000 bytes", md(strings.Repeat("a", jsonLimit+1), nil), "payload_too_large"},
			{"a streamed Markdown body over 2,000,000 bytes", func(t *testing.T, f *fixture, token string) *testkit.Response {
				return f.stream(t, token, "text/markdown", []byte(strings.Repeat("a", jsonLimit+1)))
			}, "payload_too_large"},
			{"a multipart body over 25,000,000 bytes", mp(underLimitImages(5)...), "payload_too_large"},
			{"a streamed multipart body over 25,000,000 bytes of text fields", streamed(bigFields()...), "payload_too_large"},
			{"a streamed multipart body over 25,000,000 bytes of images each under 5 MiB", streamed(underLimitImages(6)...), "payload_too_large"},
			{"a multipart text field over 2,000,000 bytes", mp(field("content", strings.Repeat("a", jsonLimit+1))), "payload_too_large"},

			{"an image over 5 MiB", withImage(file("big.png", "image/png", testkit.PNGOfSize(t, imageLimit+1))), "image_too_large"},

			{"stored Markdown over 1,900,000 bytes", md(strings.Repeat("a", 1_950_000), nil), "note_too_large"},
			{"stored JSON content over 1,900,000 bytes", js(jsonBody(strings.Repeat("a", 1_950_000))), "note_too_large"},
			{"stored multipart content over 1,900,000 bytes", mp(field("content", strings.Repeat("a", 1_950_000))), "note_too_large"},
			{"the stored size counts UTF-8 bytes, not characters", md(strings.Repeat("é", noteLimit/2+1), nil), "note_too_large"},
			{"the stored size counts title, summary and properties too",
				js(`{"content":"` + strings.Repeat("a", 1_000_000) + `","title":"` + strings.Repeat("t", 300_000) +
					`","summary":"` + strings.Repeat("s", 300_000) + `","properties":{"p":"` + strings.Repeat("p", 300_000) + `"}}`), "note_too_large"},
			{"the stored size counts frontmatter properties", md("---\np: "+strings.Repeat("p", 200_000)+"\n---\n"+strings.Repeat("a", 1_750_000), nil),
				"note_too_large"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				acc := f.NewAccount(t, "large")
				c.send(t, f, acc.Token).Expect(t, http.StatusRequestEntityTooLarge, c.code)
				f.storedNothing(t, acc)
			})
		}
		if n := f.rows(t, "blobs", nil); n != 0 {
			t.Errorf("%d blobs stored, want none", n)
		}
	})
}

func TestLimitsAreInclusive(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "writer")
		t.Run("stored note data of exactly 1,900,000 bytes", func(t *testing.T) {
			id := f.published(t, f.markdown(t, acc.Token, strings.Repeat("a", noteLimit), nil))
			if n := len(f.stored(t, id).Content); n != noteLimit {
				t.Errorf("stored %d bytes", n)
			}
		})
		t.Run("an image of exactly 5 MiB", func(t *testing.T) {
			before := f.usage(t, acc)
			f.published(t, f.multipart(t, acc.Token, field("content", "[[max.png]]"), file("max.png", "image/png", testkit.PNGOfSize(t, imageLimit))))
			if got := f.usage(t, acc) - before; got != imageLimit {
				t.Errorf("usage grew by %d, want %d", got, imageLimit)
			}
		})
	})
}

func TestImageQuota(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b, testkit.WithEnv("SHARE_IMAGE_QUOTA_BYTES", "1000"))
		acc := f.NewAccount(t, "writer")
		upload := func(sizes ...int) *testkit.Response {
			parts := []part{field("content", "images")}
			for i, n := range sizes {
				parts = append(parts, file(fmt.Sprintf("i%d.png", i), "image/png", testkit.PNGOfSize(t, n)))
			}
			return f.multipart(t, acc.Token, parts...)
		}
		unchanged := func(t *testing.T, publications, images, used int64) {
			t.Helper()
			if n := f.rows(t, "publications", &acc); n != publications {
				t.Errorf("%d publications, want %d", n, publications)
			}
			if n := f.rows(t, "images", &acc); n != images {
				t.Errorf("%d images, want %d", n, images)
			}
			if objs := f.objects(t, acc); int64(len(objs)) != images {
				t.Errorf("%d objects in the store, want %d", len(objs), images)
			}
			if n := f.usage(t, acc); n != used {
				t.Errorf("image_bytes_used = %d, want %d", n, used)
			}
		}

		f.published(t, upload(600))
		unchanged(t, 1, 1, 600)

		t.Run("an image that would pass the quota is refused and stores nothing", func(t *testing.T) {
			upload(401).Expect(t, http.StatusRequestEntityTooLarge, "storage_quota_exceeded")
			unchanged(t, 1, 1, 600)
		})
		t.Run("images that fit alone but not together are refused and store nothing", func(t *testing.T) {
			upload(200, 201).Expect(t, http.StatusRequestEntityTooLarge, "storage_quota_exceeded")
			unchanged(t, 1, 1, 600)
		})
		t.Run("a note without images still publishes at a full quota", func(t *testing.T) {
			f.published(t, f.markdown(t, acc.Token, "no images", nil))
			unchanged(t, 2, 1, 600)
		})
		t.Run("filling the quota exactly is allowed", func(t *testing.T) {
			f.published(t, upload(200, 200))
			unchanged(t, 3, 3, 1000)
		})
		t.Run("a full quota refuses the smallest image", func(t *testing.T) {
			upload(len(testkit.PNG(t))).Expect(t, http.StatusRequestEntityTooLarge, "storage_quota_exceeded")
			unchanged(t, 3, 3, 1000)
		})
		t.Run("the quota is per account", func(t *testing.T) {
			other := f.NewAccount(t, "other")
			f.published(t, f.multipart(t, other.Token, field("content", "x"), file("a.png", "image/png", testkit.PNGOfSize(t, 1000))))
			if n := f.usage(t, other); n != 1000 {
				t.Errorf("other account's usage = %d, want 1000", n)
			}
		})
	})
}

func TestParallelPublishesNeverExceedTheQuota(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		const quota, size, uploads = 10_000, 1_000, 20
		f := start(t, b, testkit.WithEnv("SHARE_IMAGE_QUOTA_BYTES", strconv.Itoa(quota)))
		acc := f.NewAccount(t, "writer")
		body, contentType := multipartBody(t, field("content", "![[a.png]]"), file("a.png", "image/png", testkit.PNGOfSize(t, size)))

		statuses := make([]*testkit.Response, uploads)
		var wg sync.WaitGroup
		for i := range uploads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = f.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Body: body, ContentType: contentType, Token: acc.Token})
			}()
		}
		wg.Wait()

		var ok, refused int
		for _, resp := range statuses {
			switch {
			case resp == nil:
			case resp.Status == http.StatusOK:
				ok++
			case resp.Status == http.StatusRequestEntityTooLarge && strings.Contains(string(resp.Body), `"storage_quota_exceeded"`):
				refused++
			default:
				t.Errorf("unexpected response %d %s", resp.Status, resp.Body)
			}
		}
		if ok != quota/size || refused != uploads-quota/size {
			t.Errorf("%d published and %d refused, want %d and %d", ok, refused, quota/size, uploads-quota/size)
		}
		if n := f.usage(t, acc); n != quota {
			t.Errorf("image_bytes_used = %d, want exactly the quota %d", n, quota)
		}
		if n := f.rows(t, "publications", &acc); n != int64(ok) {
			t.Errorf("%d publications stored for %d successes", n, ok)
		}
		if n := f.rows(t, "images", &acc); n != int64(ok) {
			t.Errorf("%d images stored for %d successes", n, ok)
		}
		// The refused uploads' objects are gone, and nothing stays reserved.
		if objs := f.objects(t, acc); len(objs) != ok {
			t.Errorf("%d objects in the store for %d successes", len(objs), ok)
		}
		if n := f.rows(t, "image_reservations", &acc); n != 0 {
			t.Errorf("%d quota reservations left", n)
		}
	})
}

func TestSixtyFirstPublishInAMinuteIsRateLimited(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "busy")
		began := time.Now()
		for i := 1; i <= 60; i++ {
			if resp := f.markdown(t, acc.Token, "#", nil); resp.Status != http.StatusOK {
				t.Fatalf("publish %d: %d %s", i, resp.Status, resp.Body)
			}
		}
		// The limit is a GCRA of 60 a minute with a burst of 60: the Redis limiter runs on
		// real time and earns one more request per second, so a slow run may be allowed
		// one extra publish per second it took. The in-process limiter reads the frozen
		// test clock and must refuse the 61st exactly.
		extra := 0
		if b.RedisURL != "" {
			extra = int(time.Since(began) / time.Second)
		}
		var limited *testkit.Response
		for i := 0; i <= extra && limited == nil; i++ {
			if resp := f.markdown(t, acc.Token, "#", nil); resp.Status != http.StatusOK {
				limited = resp
			}
		}
		if limited == nil {
			t.Fatalf("%d publishes after the 60th were all allowed", extra+1)
		}
		limited.Expect(t, http.StatusTooManyRequests, "rate_limited")
		if secs, err := strconv.Atoi(limited.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 60 {
			t.Errorf("Retry-After = %q, want whole seconds in 1..60", limited.Header.Get("Retry-After"))
		}
		// The limit is per account: another account still publishes.
		other := f.NewAccount(t, "calm")
		f.published(t, f.markdown(t, other.Token, "#", nil))
	})
}
