package notes_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// storedImageBytes sums the image bytes the account's served (not released) images hold.
func storedImageBytes(t *testing.T, b testkit.Backend, acc testkit.Account) int64 {
	t.Helper()
	var n int64
	if err := testkit.OpenDB(t, b).Table("images").Where("account_cuid = ? AND NOT released", acc.UserCUID).
		Select("COALESCE(SUM(size), 0)").Row().Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReplacingAnImageIsChargedTheDifference: at a nearly full quota a multipart PATCH
// may replace an image with one of about its size, as docs/api.md "Update" says the quota
// counts the difference; a replacement that would really pass the quota is refused and
// the old image stays; and concurrent replacements and uploads never settle above the
// quota.
func TestReplacingAnImageIsChargedTheDifference(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		const quota = 10_000
		clock := testkit.NewClock()
		s := testkit.StartServer(t, b, targets, testkit.WithClock(clock), testkit.WithEnv("SHARE_IMAGE_QUOTA_BYTES", strconv.Itoa(quota)))
		f := &fixture{Server: s, t: t, acc: s.NewAccount(t, "owner"), clock: clock}
		ctx := context.Background()
		a, bImg := testkit.PNGOfSize(t, 6000), testkit.PNGOfSize(t, 3000)
		up := testkit.Must(f.App.Deps().Publisher()).NewUpload(f.acc.UserCUID)
		for name, data := range map[string][]byte{"a.png": a, "b.png": bImg} {
			if err := up.Add(ctx, name, "image/png", bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
		}
		id := f.publish(f.acc, note.Draft{Content: "![[a.png]] ![[b.png]]", Upload: up})
		used := int64(len(a) + len(bImg))

		t.Run("an image of about the same size replaces one at a nearly full quota", func(t *testing.T) {
			f.t = t
			bigger := testkit.PNGOfSize(t, 6500)
			f.multipartPatch(f.acc.Token, id, "", nil, map[string][]byte{"a.png": bigger}).Expect(t, http.StatusOK, "")
			used += int64(len(bigger) - len(a))
			a = bigger
			if got := f.image(id, "a.png"); !bytes.Equal(got, a) {
				t.Errorf("a.png reads back %d bytes, want the %d of the replacement", len(got), len(a))
			}
			if n := f.usage(); n != used {
				t.Errorf("image_bytes_used = %d, want %d", n, used)
			}
		})
		t.Run("a PATCH that replaces one image and adds another is charged the difference", func(t *testing.T) {
			f.t = t
			smaller, c := testkit.PNGOfSize(t, 6000), testkit.PNGOfSize(t, 400)
			f.multipartPatch(f.acc.Token, id, "", map[string]string{"content": "![[a.png]] ![[b.png]] ![[c.png]]"},
				map[string][]byte{"a.png": smaller, "c.png": c}).Expect(t, http.StatusOK, "")
			used += int64(len(smaller) - len(a) + len(c))
			a = smaller
			if n := f.usage(); n != used {
				t.Errorf("image_bytes_used = %d, want %d", n, used)
			}
		})
		t.Run("a replacement that would pass the quota is refused and the old image stays", func(t *testing.T) {
			f.t = t
			objects := f.objects()
			over := testkit.PNGOfSize(t, int(quota-used)+len(a)+1)
			f.multipartPatch(f.acc.Token, id, "", nil, map[string][]byte{"a.png": over}).
				Expect(t, http.StatusRequestEntityTooLarge, "storage_quota_exceeded")
			if got := f.image(id, "a.png"); !bytes.Equal(got, a) {
				t.Errorf("a.png reads back %d bytes, want the %d it had", len(got), len(a))
			}
			if n := f.usage(); n != used {
				t.Errorf("image_bytes_used = %d, want %d as before", n, used)
			}
			if n := f.objects(); n != objects {
				t.Errorf("%d objects, want the %d there were", n, objects)
			}
			// The quota exactly is allowed.
			exact := testkit.PNGOfSize(t, int(quota-used)+len(a))
			f.multipartPatch(f.acc.Token, id, "", nil, map[string][]byte{"a.png": exact}).Expect(t, http.StatusOK, "")
			used, a = quota, exact
			if n := f.usage(); n != quota {
				t.Errorf("image_bytes_used = %d, want the quota %d", n, quota)
			}
		})
		t.Run("concurrent replacements and uploads never settle above the quota", func(t *testing.T) {
			f.t = t
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					// Replacements of a.png of about its size, some larger, some smaller.
					data := testkit.PNGOfSize(t, len(a)-400+100*i)
					resp := f.multipartPatch(f.acc.Token, id, "", nil, map[string][]byte{"a.png": data})
					if resp.Status != http.StatusOK && resp.Status != http.StatusRequestEntityTooLarge {
						t.Errorf("replacement %d: %d %s", i, resp.Status, resp.Body)
					}
				})
				wg.Go(func() {
					// New images of b.png's note, which the replacements must leave room for.
					name := fmt.Sprintf("n%d.png", i)
					resp := f.multipartPatch(f.acc.Token, id, "", nil, map[string][]byte{name: testkit.PNGOfSize(t, 300)})
					if resp.Status != http.StatusOK && resp.Status != http.StatusRequestEntityTooLarge {
						t.Errorf("new image %d: %d %s", i, resp.Status, resp.Body)
					}
				})
			}
			wg.Wait()
			stored := storedImageBytes(t, b, f.acc)
			if n := f.usage(); n != stored || n > quota {
				t.Errorf("image_bytes_used = %d with %d bytes of images served, want them equal and at most the quota %d", n, stored, quota)
			}
			var reserved int64
			if err := testkit.OpenDB(t, b).Table("image_reservations").Count(&reserved).Error; err != nil || reserved != 0 {
				t.Errorf("%d reservations left (%v)", reserved, err)
			}
		})
	})
}
