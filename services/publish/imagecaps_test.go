package publish_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// tinyImages returns n image parts of the smallest PNG, named i0.png, i1.png, ….
func tinyImages(t testing.TB, n int) []part {
	png := testkit.PNG(t)
	parts := make([]part, n)
	for i := range parts {
		parts[i] = file(fmt.Sprintf("i%d.png", i), "image/png", png)
	}
	return parts
}

// message returns the error message of a response.
func message(t testing.TB, resp *testkit.Response) string {
	t.Helper()
	var body struct{ Message string }
	resp.Decode(t, &body)
	return body.Message
}

func TestImagesPerPublishAreCapped(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		t.Run("a publish of exactly 100 images is stored", func(t *testing.T) {
			acc := f.NewAccount(t, "hundred")
			f.published(t, f.multipart(t, acc.Token, append([]part{field("content", "[[i99.png]]")}, tinyImages(t, note.MaxImagesPerPublish)...)...))
			if n := f.rows(t, "images", &acc); n != note.MaxImagesPerPublish {
				t.Errorf("%d images stored, want %d", n, note.MaxImagesPerPublish)
			}
		})
		t.Run("the 101st image is refused with a message naming the limit, and nothing is stored", func(t *testing.T) {
			acc := f.NewAccount(t, "over")
			resp := f.multipart(t, acc.Token, append([]part{field("content", "x")}, tinyImages(t, note.MaxImagesPerPublish+1)...)...)
			resp.Expect(t, http.StatusRequestEntityTooLarge, "too_many_images")
			if m := message(t, resp); !strings.Contains(m, "100 images") {
				t.Errorf("message %q does not name the limit of 100 images", m)
			}
			f.storedNothing(t, acc)
		})
		t.Run("the body is read no further than the 101st image part", func(t *testing.T) {
			acc := f.NewAccount(t, "stalled")
			body, contentType := multipartBody(t, append([]part{field("content", "x")}, tinyImages(t, note.MaxImagesPerPublish+1)...)...)
			// Everything up to the middle of the 101st image's bytes is sent; the rest
			// never comes. A server that went on reading would wait 10 s and answer 408.
			r := f.rawPublish(t, acc.Token, contentType, len(body))
			closing := len("\r\n--" + strings.Repeat("b", 60) + "--\r\n") // multipart.Writer's boundaries are 60 characters.
			if err := r.write(body[:len(body)-closing-len(testkit.PNG(t))/2]); err != nil {
				t.Fatal(err)
			}
			resp, took := r.response(t)
			resp.Expect(t, http.StatusRequestEntityTooLarge, "too_many_images")
			// The 100 images before it are stored first (in MinIO, about 25 ms each on a
			// slow disk); a server that went on reading would wait the 10 s.
			if took > 5*time.Second {
				t.Errorf("refused after %v, want at once", took)
			}
			r.closedByServer(t, lingerBound)
			f.storedNothing(t, acc)
		})
		t.Run("5,000 tiny images are refused in under 6 s while reads of another note stay under 300 ms", func(t *testing.T) {
			acc := f.NewAccount(t, "flood")
			other := f.published(t, f.markdown(t, acc.Token, "# Another note", nil))
			body, contentType := multipartBody(t, append([]part{field("content", "x")}, tinyImages(t, 5000)...)...)

			stop := testkit.Meanwhile(t, func() error {
				_, err := testkit.Must(f.App.Deps().Reader()).ReadView(context.Background(), other)
				return err
			})
			// The reads run from before the publish until after it.
			time.Sleep(50 * time.Millisecond)
			began := time.Now()
			resp := f.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Body: body, ContentType: contentType, Token: acc.Token})
			took := time.Since(began)
			time.Sleep(50 * time.Millisecond)
			reads, slowest := stop()

			resp.Expect(t, http.StatusRequestEntityTooLarge, "too_many_images")
			// The 100 allowed images are stored first (in MinIO, about 25 ms each on a
			// slow disk); storing all 5,000 would take minutes.
			if took > 6*time.Second {
				t.Errorf("the publish of 5,000 images took %v, want under 6 s", took)
			}
			if slowest > 300*time.Millisecond {
				t.Errorf("the slowest of %d reads of another note took %v, want under 300 ms", reads, slowest)
			}
			t.Logf("%d-byte body of 5,000 images refused in %v; %d reads of another note meanwhile, the slowest %v", len(body), took, reads, slowest)
			if n := f.rows(t, "images", &acc); n != 0 {
				t.Errorf("%d images stored, want none", n)
			}
		})
	})
}

// setImageCount sets the account's count of images toward the per-account limit, as if
// it had published that many.
func (f *fixture) setImageCount(t *testing.T, acc testkit.Account, n int64) {
	t.Helper()
	if err := f.db.Exec("UPDATE accounts SET image_count = ? WHERE cuid = ?", n, acc.UserCUID).Error; err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) imageCount(t *testing.T, acc testkit.Account) int64 {
	t.Helper()
	var n int64
	if err := f.db.Raw("SELECT image_count FROM accounts WHERE cuid = ?", acc.UserCUID).Row().Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestImagesPerAccountAreCapped(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		onePNG := func(acc testkit.Account) *testkit.Response {
			return f.multipart(t, acc.Token, field("content", "![[a.png]]"), file("a.png", "image/png", testkit.PNG(t)))
		}

		t.Run("the count follows publishes and unpublishes", func(t *testing.T) {
			acc := f.NewAccount(t, "counted")
			first := f.published(t, f.multipart(t, acc.Token, append([]part{field("content", "x")}, tinyImages(t, 3)...)...))
			f.published(t, onePNG(acc))
			f.published(t, f.markdown(t, acc.Token, "no images", nil))
			if n := f.imageCount(t, acc); n != 4 {
				t.Errorf("image_count = %d after 4 images, want 4", n)
			}
			if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, first); err != nil {
				t.Fatal(err)
			}
			if n := f.imageCount(t, acc); n != 1 {
				t.Errorf("image_count = %d after unpublishing 3 of 4 images, want 1", n)
			}
		})

		t.Run("the image over 10,000 is refused with a message naming the limit; unpublishing makes room", func(t *testing.T) {
			acc := f.NewAccount(t, "full")
			f.setImageCount(t, acc, note.MaxImagesPerAccount-1)
			last := f.published(t, onePNG(acc))
			resp := onePNG(acc)
			resp.Expect(t, http.StatusRequestEntityTooLarge, "too_many_images")
			if m := message(t, resp); !strings.Contains(m, "10000 images") {
				t.Errorf("message %q does not name the limit of 10000 images", m)
			}
			if n := f.rows(t, "images", &acc); n != 1 {
				t.Errorf("%d images stored, want the 1 that fitted", n)
			}
			if n := f.imageCount(t, acc); n != note.MaxImagesPerAccount {
				t.Errorf("image_count = %d, want exactly %d", n, note.MaxImagesPerAccount)
			}
			if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, last); err != nil {
				t.Fatal(err)
			}
			f.published(t, onePNG(acc))
			// A note without images is never refused for the account's images.
			f.published(t, f.markdown(t, acc.Token, "no images", nil))
		})

		t.Run("concurrent publishes never pass the limit", func(t *testing.T) {
			const room, publishes = 5, 20
			acc := f.NewAccount(t, "racing")
			f.setImageCount(t, acc, note.MaxImagesPerAccount-room)
			body, contentType := multipartBody(t, field("content", "![[a.png]]"), file("a.png", "image/png", testkit.PNG(t)))
			responses := make([]*testkit.Response, publishes)
			var wg sync.WaitGroup
			for i := range publishes {
				wg.Go(func() {
					responses[i] = f.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Body: body, ContentType: contentType, Token: acc.Token})
				})
			}
			wg.Wait()
			var ok, refused int
			for _, resp := range responses {
				switch {
				case resp.Status == http.StatusOK:
					ok++
				case resp.Status == http.StatusRequestEntityTooLarge && strings.Contains(string(resp.Body), `"too_many_images"`):
					refused++
				default:
					t.Errorf("unexpected response %d %s", resp.Status, resp.Body)
				}
			}
			if ok != room || refused != publishes-room {
				t.Errorf("%d published and %d refused, want %d and %d", ok, refused, room, publishes-room)
			}
			if n := f.imageCount(t, acc); n != note.MaxImagesPerAccount {
				t.Errorf("image_count = %d, want exactly %d", n, note.MaxImagesPerAccount)
			}
			if n := f.rows(t, "images", &acc); n != room {
				t.Errorf("%d images stored, want %d", n, room)
			}
		})
	})
}
