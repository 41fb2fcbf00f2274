package images_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// edited publishes a note with images and updates its text twice, leaving two versions.
func (f *fixture) edited(t *testing.T, acc testkit.Account, imgs ...image) string {
	t.Helper()
	p, _ := f.publish(t, acc, nil, imgs...)
	for _, text := range []string{"second", "third"} {
		if _, err := testkit.Must(f.App.Deps().Publisher()).Update(context.Background(), acc.UserCUID, p.CUID, note.Patch{Content: ptr(text)}); err != nil {
			t.Fatal(err)
		}
	}
	return p.CUID
}

func TestReapCommandPurgesNotesUnpublishedLongerThanTheRetention(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		old, recent, live := f.edited(t, acc, pngs(t, 2)...), f.edited(t, acc), f.edited(t, acc)
		for _, id := range []string{old, recent} {
			if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, id); err != nil {
				t.Fatal(err)
			}
		}
		// Unpublishing sets updated_at; move it back as if it had happened days ago.
		backdate := func(id string, ago time.Duration) {
			if err := testkit.OpenDB(t, b).Exec("UPDATE publications SET updated_at = ? WHERE cuid = ?",
				time.Now().Add(-ago).UTC(), id).Error; err != nil {
				t.Fatal(err)
			}
		}
		backdate(old, 7*24*time.Hour+time.Minute)
		backdate(recent, 2*time.Hour)

		run := func(env map[string]string) (int, map[string]int64, string) {
			code, out, logs := testkit.Run(t, b, operator, env, "reap")
			var summary map[string]int64
			if code == 0 {
				if err := json.Unmarshal([]byte(out), &summary); err != nil {
					t.Fatalf("the reaper printed %q: %v", out, err)
				}
			}
			return code, summary, logs
		}
		// The default retention is 7 days: only the note unpublished 7 days ago goes, after
		// its images in the same run.
		code, summary, logs := run(map[string]string{})
		if code != 0 || summary["images"] != 2 || summary["notes"] != 1 || summary["versions"] != 2 {
			t.Fatalf("reaper: exit %d, %v, logs %s; want 2 images, 1 note and its 2 versions", code, summary, logs)
		}
		if !strings.Contains(logs, `"notes":1`) || !strings.Contains(logs, `"versions":2`) {
			t.Errorf("the reaper did not log the purged notes: %s", logs)
		}
		if p, v := testkit.StoredRows(t, b, old); p != 0 || v != 0 {
			t.Errorf("the note unpublished 7 days ago keeps %d rows and %d versions", p, v)
		}
		if p, v := testkit.StoredRows(t, b, recent); p != 1 || v != 2 {
			t.Errorf("the note unpublished 2 hours ago has %d rows and %d versions; want it kept for now", p, v)
		}
		// SHARE_UNPUBLISHED_RETENTION shortens it.
		if code, summary, logs := run(map[string]string{"SHARE_UNPUBLISHED_RETENTION": "1h"}); code != 0 || summary["notes"] != 1 || summary["versions"] != 2 {
			t.Fatalf("reaper with a 1h retention: exit %d, %v, %s", code, summary, logs)
		}
		if p, v := testkit.StoredRows(t, b, recent); p != 0 || v != 0 {
			t.Errorf("the note unpublished 2 hours ago keeps %d rows and %d versions after a 1h retention", p, v)
		}
		if p, v := testkit.StoredRows(t, b, live); p != 1 || v != 2 {
			t.Errorf("the published note has %d rows and %d versions; the reaper must not touch it", p, v)
		}
		f.Do(t, testkit.Request{Method: "GET", Path: "/api/images/" + acc.UserCUID + "/" + old + "/i0.png"}).Expect(t, 404, "not_found")
	})
}

func TestServingProcessPurgesUnpublishedNotesAfterTheRetention(t *testing.T) {
	clock := testkit.NewClock()
	b := testkit.SQLiteBackend(t)
	s := testkit.StartServer(t, b, reaping(), testkit.WithClock(clock), testkit.WithEnv("SHARE_REAP_INTERVAL", "50ms"),
		testkit.WithEnv("SHARE_UNPUBLISHED_RETENTION", "2d"))
	f := &fixture{Server: s, clock: clock}
	acc := f.NewAccount(t, "owner")
	id := f.edited(t, acc)
	if err := testkit.Must(f.App.Deps().Publisher()).Unpublish(context.Background(), acc.UserCUID, id); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // Several reaps, all within the retention.
	if p, v := testkit.StoredRows(t, b, id); p != 1 || v != 2 {
		t.Fatalf("within the retention the note has %d rows and %d versions; want it kept", p, v)
	}
	clock.Advance(48 * time.Hour)
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := string(s.Admin(t, "/metrics").Body)
		if strings.Contains(m, "sharenote_reaper_notes_purged_total 1") && strings.Contains(m, "sharenote_reaper_versions_purged_total 2") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the in-process reaper did not purge the note and its 2 versions once the retention had passed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p, v := testkit.StoredRows(t, b, id); p != 0 || v != 0 {
		t.Errorf("after the purge the note keeps %d rows and %d versions", p, v)
	}
}
