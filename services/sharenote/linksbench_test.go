//go:build loadbench

package sharenote_test

import (
	"context"
	"fmt"
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
	notes := s.App.Deps().Notes
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
