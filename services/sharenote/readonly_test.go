package sharenote_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/images"
	"github.com/sharenote/sharenote/services/notes"
	"github.com/sharenote/sharenote/services/ogrenderer"
	"github.com/sharenote/sharenote/services/publish"
)

// statements records what a process's database runs for requests, by the request id of
// each statement's context (logging.RequestID; "" for none), through gorm callbacks after
// every statement. Background jobs are not requests and are left out (testkit.ForRequest).
type statements struct {
	mu     sync.Mutex
	ran    map[string][]string
	writes map[string][]string
}

// writeSQL is a statement that writes or locks rows for writing (SELECT … FOR UPDATE
// needs UPDATE privilege, which a read-only role lacks).
var writeSQL = regexp.MustCompile(`(?i)\b(INSERT|UPDATE|DELETE|MERGE|TRUNCATE|UPSERT)\b`)

// watchStatements records gdb's statements from now on until the test ends.
func watchStatements(t *testing.T, gdb *gorm.DB) *statements {
	t.Helper()
	s := &statements{ran: map[string][]string{}, writes: map[string][]string{}}
	record := func(d *gorm.DB) {
		ctx := d.Statement.Context
		if !testkit.ForRequest(ctx) {
			return
		}
		id, sql := logging.RequestID(ctx), d.Statement.SQL.String()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ran[id] = append(s.ran[id], sql)
		if writeSQL.MatchString(sql) {
			s.writes[id] = append(s.writes[id], sql)
		}
	}
	cb := gdb.Callback()
	name := fmt.Sprintf("test:statements:%p", s)
	for _, err := range []error{
		cb.Query().After("gorm:query").Register(name, record),
		cb.Row().After("gorm:row").Register(name, record),
		cb.Raw().After("gorm:raw").Register(name, record),
		cb.Create().After("gorm:create").Register(name, record),
		cb.Update().After("gorm:update").Register(name, record),
		cb.Delete().After("gorm:delete").Register(name, record),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// check fails the test on a write by any request (or by no request at all), and, when
// load, unless the request id ran at least one statement, which shows that statements
// are attributed.
func (s *statements) check(t *testing.T, process, id string, load bool) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for rid, sqls := range s.writes {
		t.Errorf("%s: request %q wrote: %q", process, rid, sqls)
	}
	s.writes = map[string][]string{}
	if load && len(s.ran[id]) == 0 {
		t.Errorf("%s: request %s ran no statement the hook saw", process, id)
	}
}

// bodySQL is a statement that reads a note's body (its content or render): og-renderer
// draws none of it (it reads the properties, for the description).
var bodySQL = regexp.MustCompile(`(?i)\bp\.\*|\b(content|html|render_links|render_outline)\b`)

// staleMarker is the HTML of the render a test stores as an older renderer's.
const staleMarker = "<p>stale render of an older renderer</p>"

// makeStale stores cuid's render as an older renderer's, as a renderer upgrade leaves it.
func makeStale(t *testing.T, b testkit.Backend, cuid string) {
	t.Helper()
	err := testkit.OpenDB(t, b).Exec("UPDATE publications SET render_version = ?, html = ? WHERE cuid = ?",
		render.Version-1, staleMarker, cuid).Error
	if err != nil {
		t.Fatal(err)
	}
}

// readers are a split deployment's reading targets: two notes replicas, og-renderer and
// images; and setup, a notes process whose statements are not watched, through which the
// test publishes.
type readers struct {
	setup            *testkit.Server
	notes            [2]*testkit.Server
	og, images       *testkit.Server
	notesSQL         [2]*statements
	ogSQL, imagesSQL *statements
}

// startReaders starts the readers on b, og-renderer and images logged in with the database
// URL readDB, the notes processes with writeDB ("" for b's own).
func startReaders(t *testing.T, b testkit.Backend, readDB, writeDB string) *readers {
	t.Helper()
	ro, rw := withDB(readDB), withDB(writeDB)
	r := &readers{setup: testkit.StartServer(t, b, []app.Target{notes.Target}, rw...),
		og:     testkit.StartServer(t, b, []app.Target{ogrenderer.Target}, ro...),
		images: testkit.StartServer(t, b, []app.Target{images.Target}, ro...)}
	for i := range r.notes {
		r.notes[i] = testkit.StartServer(t, b, []app.Target{notes.Target}, rw...)
		awaitTrust(t, r.notes[i])
		r.notesSQL[i] = watchStatements(t, r.notes[i].App.DB())
	}
	r.ogSQL, r.imagesSQL = watchStatements(t, r.og.App.DB()), watchStatements(t, r.images.App.DB())
	return r
}

// withDB is the option of a server that logs in with dbURL ("": the backend's own).
func withDB(dbURL string) []testkit.Option {
	if dbURL == "" {
		return nil
	}
	return []testkit.Option{testkit.WithEnv("SHARE_DATABASE_URL", dbURL)}
}

// publishDomainNote publishes a titled note embedding one PNG through s's domain and
// returns it.
func publishDomainNote(t *testing.T, s *testkit.Server, acc testkit.Account) note.Publication {
	t.Helper()
	notes := testkit.Must(s.App.Deps().Publisher())
	up := notes.NewUpload(acc.UserCUID)
	if err := up.Add(context.Background(), "a.png", "image/png", bytes.NewReader(testkit.PNG(t))); err != nil {
		t.Fatal(err)
	}
	p, err := notes.Publish(context.Background(), acc.UserCUID, note.Draft{Title: new("Stale"), Content: "# Stale\n\n![[a.png]]\n", Upload: up})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll sends every public GET of the publication to its target, twice (a load, unless
// cached, then a cached read), each with a request id of its own, and checks that none
// wrote. It returns the notes replicas' pages.
func (r *readers) readAll(t *testing.T, round string, acc testkit.Account, p note.Publication, cached bool) (pages [2]string) {
	t.Helper()
	type read struct {
		name string
		s    *testkit.Server
		sql  *statements
		path string
	}
	reads := []read{{"og-renderer", r.og, r.ogSQL, "/api/og/" + p.CUID + ".png"},
		{"images", r.images, r.imagesSQL, "/api/images/" + acc.UserCUID + "/" + p.CUID + "/a.png"}}
	for i, s := range r.notes {
		name := fmt.Sprintf("notes %d", i)
		reads = append(reads, read{name, s, r.notesSQL[i], "/api/notes/" + p.CUID}, read{name, s, r.notesSQL[i], "/s/" + p.CUID})
	}
	for _, rd := range reads {
		for try := range 2 {
			id := fmt.Sprintf("%s-%s-%d-%d", round, strings.ReplaceAll(rd.name, " ", ""), len(rd.path), try)
			resp := rd.s.Do(t, testkit.Request{Method: "GET", Path: rd.path, Header: map[string]string{"X-Request-ID": id}})
			resp.Expect(t, http.StatusOK, "")
			if try == 0 {
				rd.sql.check(t, rd.name+" GET "+rd.path, id, !cached)
			}
			if rd.s == r.og {
				r.ogSQL.mu.Lock()
				for _, sql := range r.ogSQL.ran[id] {
					if bodySQL.MatchString(sql) {
						t.Errorf("og-renderer reads more than a card shows: %s", sql)
					}
				}
				r.ogSQL.mu.Unlock()
			}
			if i := indexOf(r.notes[:], rd.s); i >= 0 && strings.HasPrefix(rd.path, "/s/") {
				pages[i] = string(resp.Body)
			}
		}
	}
	for _, sql := range append([]*statements{r.ogSQL, r.imagesSQL}, r.notesSQL[:]...) {
		sql.mu.Lock()
		for rid, w := range sql.writes {
			t.Errorf("a cached read or another request %q wrote: %q", rid, w)
		}
		sql.mu.Unlock()
	}
	return pages
}

func indexOf(list []*testkit.Server, s *testkit.Server) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// TestPublicReadsNeverWriteAndAStaleRenderIsRedoneOnceByAWriter runs a split deployment on
// Postgres: two notes replicas, og-renderer and images. No public GET (note JSON, page,
// preview, image) runs a statement that writes, whether the stored render is current or
// of an older renderer; a stale render is served as it is, until the publish target (two
// replicas, the writers) renders it again, once, and every notes replica serves the new
// render within a second of its storing.
func TestPublicReadsNeverWriteAndAStaleRenderIsRedoneOnceByAWriter(t *testing.T) {
	b := testkit.PostgresBackend(t)
	publicReadsNeverWrite(t, b, "", "")
}

// publicReadsNeverWrite is the test above, with og-renderer and images logged in with the
// database URL readDB, the others with writeDB ("" for the backend's own).
func publicReadsNeverWrite(t *testing.T, b testkit.Backend, readDB, writeDB string) {
	r := startReaders(t, b, readDB, writeDB)
	acc := r.setup.NewAccount(t, "ada")
	fresh := publishDomainNote(t, r.setup, acc)
	r.readAll(t, "fresh", acc, fresh, false)

	stale := publishDomainNote(t, r.setup, acc)
	makeStale(t, b, stale.CUID)
	for i, page := range r.readAll(t, "stale", acc, stale, false) {
		if !strings.Contains(page, staleMarker) {
			t.Errorf("notes %d does not serve the stored (stale) render: reads never render", i)
		}
	}

	writers := []*testkit.Server{testkit.StartServer(t, b, []app.Target{publish.Target}, withDB(writeDB)...),
		testkit.StartServer(t, b, []app.Target{publish.Target}, withDB(writeDB)...)}
	gdb := testkit.OpenDB(t, b)
	var stored time.Time
	within(t, time.Now(), 5*time.Second, "the background render", func() bool {
		var version int
		if err := gdb.Raw("SELECT render_version FROM publications WHERE cuid = ?", stale.CUID).Scan(&version).Error; err != nil {
			t.Fatal(err)
		}
		stored = time.Now()
		return version == render.Version
	})
	for i, s := range r.notes {
		within(t, stored, time.Second, fmt.Sprintf("the new render on notes %d", i), func() bool {
			return !strings.Contains(string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + stale.CUID}).Body), staleMarker)
		})
	}
	r.readAll(t, "redone", acc, stale, true)
	time.Sleep(time.Second) // Several more runs of the writers' render job.
	renders := 0.0
	for _, w := range writers {
		renders += metric(t, w, `sharenote_note_renders_total{cause="background",outcome="final"}`)
	}
	if renders != 1 {
		t.Errorf("the writers rendered the stale note %v times, want once", renders)
	}
}
