//go:build loadbench

package sharenote_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/libs/testkit"
)

// linksAuthorNotes is how many publications the author of the links bench has.
const linksAuthorNotes = 10_000

// benchLinks publishes a note with 200 links to its author's notes, when the author has
// 10,000 publications with paths, and the same note with the links as plain words,
// alternately through the note core on Postgres (the API's per-account limit allows 60
// a minute), and reports the time per publish of the one over the other.
func benchLinks(t *testing.T, cfg benchConfig, rep *report) {
	s, b := startLoadServer(t)
	acc := s.NewAccount(t, "vault")
	gdb := testkit.OpenDB(t, b)
	began := time.Now()
	// As the current renderer and names rules would have stored them: the background jobs
	// have nothing to do meanwhile.
	if err := gdb.Exec(`INSERT INTO publications (cuid, account_cuid, content, show_properties, unpublished, next_version,
		created_ms, created_at, updated_at, html, render_version, render_id, render_links, etag, path, path_key, names_version)
		SELECT 'l' || lpad(g::text, 23, '0'), ?, 'A note of the vault.', true, false, 1, 0, now(), now(), '<p>A note of the vault.</p>',
		?, 'r' || g, '', 'e' || g, 'Folder ' || (g % 100) || '/Note ' || g || '.md', lower('Folder ' || (g % 100) || '/Note ' || g || '.md'), ?
		FROM generate_series(1, ?) AS g`, acc.UserCUID, render.Version, note.NamesVersion, linksAuthorNotes).Error; err != nil {
		t.Fatal(err)
	}
	if err := gdb.Exec(`INSERT INTO note_names (publication_cuid, account_cuid, kind, key, path, created_ms)
		SELECT cuid, account_cuid, 1, path_key, path, created_ms FROM publications WHERE account_cuid = ?
		UNION ALL SELECT cuid, account_cuid, 2, lower(regexp_replace(path, '^.*/(.*)\.md$', '\1')), path, created_ms
		FROM publications WHERE account_cuid = ?`, acc.UserCUID, acc.UserCUID).Error; err != nil {
		t.Fatal(err)
	}
	if err := gdb.Exec("VACUUM (ANALYZE) note_names").Error; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d publications with paths and their link index in %v", linksAuthorNotes, time.Since(began).Round(time.Millisecond))

	var linked, plain strings.Builder
	for i := range 200 {
		k := 1 + i*(linksAuthorNotes/200)
		fmt.Fprintf(&linked, "See [[Note %d]] for part %d of the plan.\n\n", k, i)
		fmt.Fprintf(&plain, "See  Note %d   for part %d of the plan.\n\n", k, i)
	}
	notes := testkit.Must(s.App.Deps().Publisher())
	publish := func(content string) time.Duration {
		start := time.Now()
		p, err := notes.Publish(context.Background(), acc.UserCUID, note.Draft{Content: content, ShowProperties: true})
		if err != nil {
			t.Fatal(err)
		}
		if content == linked.String() && len(p.Warnings) > 0 {
			t.Fatalf("the links should all resolve: %+v", p.Warnings)
		}
		return time.Since(start)
	}
	publish(plain.String()) // warm-up
	publish(linked.String())
	// One after the other, so that the machine's load weighs on both alike.
	var with, without time.Duration
	n := 0
	for start := time.Now(); time.Since(start) < 2*cfg.duration; n++ {
		without += publish(plain.String())
		with += publish(linked.String())
	}
	with, without = with/time.Duration(n), without/time.Duration(n)
	rep.add(row{name: "publish, 200 links of 10,000 notes", latencyOnly: true, ratio: ratio(float64(with), float64(without)),
		goal: ptr(atMost(2, "× no links"))})
	rep.note("publish with links: %v per publish with 200 links to the author's notes (10,000 with paths), %v with the same words unlinked",
		with.Round(time.Microsecond), without.Round(time.Microsecond))
}

// renameLinkers is how many notes link to the note the rename bench renames.
const renameLinkers = 1000

// benchRename renames a note that 1,000 notes link to (a new path, as a moved file) and
// reports how long until the linking pages on a second replica, which had them all
// cached with the link as text, lead to it: until 8 of them, read over and over, all do;
// then every one of the 1,000 must.
func benchRename(t *testing.T, rep *report) {
	s1, b := startLoadServer(t)
	s2 := start(t, b, testkit.WithEnv("SHARE_TRUSTED_PROXIES", "127.0.0.1/32"), testkit.WithLogs(io.Discard))
	acc := s1.NewAccount(t, "vault")
	target := publishJSON(t, s1, acc.Token, map[string]any{"path": "Drafts/Old name.md", "content": "The target."})
	first := publishJSON(t, s1, acc.Token, map[string]any{"title": "Linker", "content": "See [[New name]]."})
	cuids := copyNote(t, testkit.OpenDB(t, b), first, "Linker", renameLinkers)
	unlinked, linked := `<span class="wikilink unresolved">New name</span>`, `<a class="wikilink" href="`+s2.URL+"/s/"+target+`">New name</a>`
	if wrong := pagesLacking(t, s2, cuids, unlinked); wrong != 0 { // and now the second replica caches them
		t.Fatalf("%d linking pages not unlinked before the rename", wrong)
	}
	began := time.Now()
	s1.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + target, Token: acc.Token, JSON: map[string]any{"path": "Drafts/New name.md"}}).Expect(t, 200, "")
	sample := make([]string, 8)
	for i := range sample {
		sample[i] = cuids[i*len(cuids)/len(sample)]
	}
	for pagesLacking(t, s2, sample, linked) > 0 {
		if time.Since(began) > 10*time.Second {
			t.Fatalf("linking pages on the second replica still not following the rename after %v", time.Since(began).Round(time.Millisecond))
		}
	}
	took := time.Since(began)
	if wrong := pagesLacking(t, s2, cuids, linked); wrong != 0 {
		t.Errorf("%d of %d linking pages on the second replica do not follow the rename", wrong, len(cuids))
	}
	rep.add(row{name: "rename, 1,000 linking pages on replica 2", latencyOnly: true, ratio: took.Seconds(), goal: ptr(atMost(1, "s"))})
	rep.note("rename: all %d linking pages on the second replica led to the renamed note %v after its PATCH", renameLinkers, took.Round(time.Millisecond))
}
