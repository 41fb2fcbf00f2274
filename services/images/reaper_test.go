package images_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/accountdb"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/images"
)

// storedImages counts image rows and objects in the store.
func storedImages(t *testing.T, f *fixture, b testkit.Backend) (rows, objects int64) {
	t.Helper()
	if err := testkit.OpenDB(t, b).Table("images").Count(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if err := testkit.OpenBlobs(t, f.Backend).List(context.Background(), "", func(blob.Info) error { objects++; return nil }); err != nil {
		t.Fatal(err)
	}
	return rows, objects
}

func pngs(t *testing.T, n int) []image {
	imgs := make([]image, n)
	for i := range imgs {
		imgs[i] = image{Filename: fmt.Sprintf("i%d.png", i), MediaType: "image/png", Data: testkit.PNG(t)}
	}
	return imgs
}

func TestReaperDeletesOnlyReleasedImages(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		gone, gonePaths := f.publish(t, acc, nil, pngs(t, 3)...)
		expiring, expPaths := f.publish(t, acc, ptr(f.clock.Now().Add(time.Minute).Truncate(time.Millisecond)), pngs(t, 2)...)
		_, livePaths := f.publish(t, acc, nil, pngs(t, 1)...)
		size := int64(len(testkit.PNG(t)))
		if used := f.usage(t, acc); used != 6*size {
			t.Fatalf("usage %d, want %d", used, 6*size)
		}
		if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, gone.CUID); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Minute)
		if used := f.usage(t, acc); used != 3*size {
			t.Fatalf("usage %d right after unpublish, want %d: the bytes must be released at once", used, 3*size)
		}
		if rows, blobs := storedImages(t, f, b); rows != 6 || blobs != 6 {
			t.Fatalf("before reaping: %d rows, %d blobs; the bytes stay until the reaper runs", rows, blobs)
		}

		r, err := note.NewReaper(notedb.New(testkit.OpenDB(t, b), testkit.Changes()), testkit.OpenBlobs(t, f.Backend)).Reap(context.Background(), 2, 0)
		if err != nil || r.Images != 3 || r.Bytes != 3*size || r.Batches != 2 {
			t.Fatalf("Reap = %+v, %v; want 3 images, %d bytes in 2 batches", r, err, 3*size)
		}
		if rows, blobs := storedImages(t, f, b); rows != 3 || blobs != 3 {
			t.Errorf("after reaping: %d rows, %d blobs, want the 3 of the expired and live notes", rows, blobs)
		}
		// The expired note's images are still stored and counted; the live one is served.
		if used := f.usage(t, acc); used != 3*size {
			t.Errorf("usage %d after reaping, want %d", used, 3*size)
		}
		if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, expiring.CUID); err != nil {
			t.Fatal(err)
		}
		for _, p := range append(gonePaths, expPaths...) {
			f.get(t, p, nil).Expect(t, 404, "not_found")
		}
		f.get(t, livePaths[0], nil).Expect(t, 200, "")
		if r, err := note.NewReaper(notedb.New(testkit.OpenDB(t, b), testkit.Changes()), testkit.OpenBlobs(t, f.Backend)).Reap(context.Background(), 100, 0); err != nil || r.Images != 2 {
			t.Errorf("second Reap = %+v, %v; want the 2 images of the note unpublished after expiring", r, err)
		}
	})
}

func TestConcurrentReapersNeverDoubleDelete(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		const notes, perNote = 10, 4
		acc := f.NewAccount(t, "owner")
		for range notes {
			p, _ := f.publish(t, acc, nil, pngs(t, perNote)...)
			if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, p.CUID); err != nil {
				t.Fatal(err)
			}
		}
		// Two reapers, each with its own connection pool, as two CronJob pods would be.
		reaper := func() *note.Reaper {
			return note.NewReaper(notedb.New(testkit.OpenDB(t, b), testkit.Changes()), testkit.OpenBlobs(t, f.Backend))
		}
		reapers := []*note.Reaper{reaper(), reaper()}
		results := make([]note.Reaped, len(reapers))
		errs := make([]error, len(reapers))
		var wg sync.WaitGroup
		for i, s := range reapers {
			wg.Go(func() { results[i], errs[i] = s.Reap(context.Background(), 3, 0) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("reaper %d: %v", i, err)
			}
		}
		if got := results[0].Images + results[1].Images; got != notes*perNote {
			t.Errorf("the reapers deleted %d + %d images, want %d in all", results[0].Images, results[1].Images, notes*perNote)
		}
		if rows, blobs := storedImages(t, f, b); rows != 0 || blobs != 0 {
			t.Errorf("%d rows and %d blobs left", rows, blobs)
		}
	})
}

func TestReaperCrashBetweenBatchesLosesNothing(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		p, _ := f.publish(t, acc, nil, pngs(t, 5)...)
		if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, p.CUID); err != nil {
			t.Fatal(err)
		}
		store := note.NewReaper(notedb.New(testkit.OpenDB(t, b), testkit.Changes()), testkit.OpenBlobs(t, f.Backend))
		// A reaper killed after its first batch: what it did is whole, the rest untouched.
		if r, err := store.Reap(context.Background(), 2, 1); err != nil || r.Images != 2 {
			t.Fatalf("first batch = %+v, %v", r, err)
		}
		if rows, blobs := storedImages(t, f, b); rows != 3 || blobs != 3 {
			t.Fatalf("after one batch: %d rows, %d blobs; want 3 and 3 (no blob without its row or row without its blob)", rows, blobs)
		}
		if r, err := store.Reap(context.Background(), 2, 0); err != nil || r.Images != 3 {
			t.Fatalf("the next run = %+v, %v; want the remaining 3", r, err)
		}
		if r, err := store.Reap(context.Background(), 2, 0); err != nil || r.Images != 0 {
			t.Errorf("an idle run = %+v, %v; want nothing", r, err)
		}
	})
}

func TestReapCommand(t *testing.T) {
	b := testkit.SQLiteBackend(t)
	f := start(t, b)
	acc := f.NewAccount(t, "owner")
	p, _ := f.publish(t, acc, nil, pngs(t, 2)...)
	if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, p.CUID); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		return testkit.Run(t, b, operator, nil, append([]string{"reap"}, args...)...)
	}
	// A session that expired long ago: the reaper deletes it too.
	if err := accountdb.New(testkit.OpenDB(t, b), testkit.Changes()).CreateSession(context.Background(), account.Session{TokenHash: "expired",
		LicenseID: 1, AccountCUID: acc.UserCUID, CreatedAt: time.Now().Add(-3 * time.Hour), ExpiresAt: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	code, out, logs := run()
	var summary map[string]int64
	if err := json.Unmarshal([]byte(out), &summary); code != 0 || err != nil || summary["images"] != 2 || summary["bytes"] != 2*int64(len(testkit.PNG(t))) ||
		summary["sessions"] != 1 {
		t.Fatalf("reaper: exit %d, printed %q (%v), logs %s", code, out, err, logs)
	}
	if !strings.Contains(logs, `"msg":"reaped"`) || !strings.Contains(logs, `"images":2`) {
		t.Errorf("the reaper did not log its counts: %s", logs)
	}
	if code, out, _ := run("--batch", "5"); code != 0 || !strings.Contains(out, `"images":0`) {
		t.Errorf("a second run: exit %d, %q", code, out)
	}
	for _, args := range [][]string{{"--batch", "0"}, {"--max-batches", "-1"}, {"--nope"}} {
		if code, _, _ := run(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// reaping is the images target as if it declared the reap, which in the program the notes
// target does: a serving process reaps when one of its targets declares it.
func reaping() []app.Target {
	t := images.Target
	t.Needs.Database, t.Needs.Jobs = app.ReadWrite, []string{app.JobReap}
	return []app.Target{t, testkit.Arranger}
}

func TestServingProcessReapsOnItsOwn(t *testing.T) {
	clock := testkit.NewClock()
	s := testkit.StartServer(t, testkit.SQLiteBackend(t), reaping(), testkit.WithClock(clock), testkit.WithEnv("SHARE_REAP_INTERVAL", "50ms"))
	f := &fixture{Server: s, clock: clock}
	acc := f.NewAccount(t, "owner")
	p, _ := f.publish(t, acc, nil, pngs(t, 2)...)
	if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, p.CUID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(string(s.Admin(t, "/metrics").Body), "sharenote_reaper_images_deleted_total 2") {
		if time.Now().After(deadline) {
			t.Fatal("the in-process reaper did not delete the 2 released images")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
func ptr[T any](v T) *T { return &v }

// operator is a program of no target: `reap` and `migrate` are commands of every program.
var operator = app.Program{Name: "sharenote"}
