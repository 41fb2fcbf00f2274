package notedb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/accountdb"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/testkit"
)

// gatedRenderer is the real renderer, except that a note whose Markdown says "wait"
// waits for the test: it says when such a render began, and the test releases it.
type gatedRenderer struct {
	app.Renderer
	began   chan string
	release chan struct{}
}

func (g gatedRenderer) Render(ctx context.Context, tenant, markdown string, parsed func(note.Links)) (note.Rendered, error) {
	if strings.Contains(markdown, "wait") {
		g.began <- markdown
		<-g.release
	}
	return g.Renderer.Render(ctx, tenant, markdown, parsed)
}

// A PATCH of new content renders before its transaction: while its render is held,
// another account publishes and the note itself takes a title (issue 34: the render ran
// under the row's lock and, on the embedded default, SQLite's one connection, stalling
// every write). A change made meanwhile is met as the API says: a patch without If-Match
// is rendered again from the changed note and keeps the change; with If-Match it is
// stale; a second change meanwhile makes it busy, and it changes nothing.
func TestAnUpdateRendersOutsideItsTransaction(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		gdb := testkit.OpenDB(t, b)
		ctx := context.Background()
		accounts := account.NewCore(accountdb.New(gdb, testkit.Changes()), time.Now, nil)
		var owners []string
		for _, name := range []string{"ann", "bob"} {
			creds, err := accounts.CreateLicense(ctx, name, name+"@example.com", "")
			if err != nil {
				t.Fatal(err)
			}
			owners = append(owners, creds.UserCUID)
		}
		gate := gatedRenderer{began: make(chan string), release: make(chan struct{})}
		store := notedb.New(gdb, testkit.Changes())
		cfg := note.Config{Now: time.Now, PublicURL: "http://127.0.0.1", Quota: 1e9}
		core := note.NewPublisher(store, store, gate, testkit.OpenBlobs(t, b), cfg)
		reader := note.NewReader(notedb.NewReads(gdb), gate, cfg)
		ann, bob := owners[0], owners[1]
		n, err := core.Publish(ctx, ann, note.Draft{Content: "first words"})
		if err != nil {
			t.Fatal(err)
		}
		// update patches the note in the background; its render waits for the test.
		update := func(patch note.Patch) chan error {
			done := make(chan error, 1)
			go func() {
				_, err := core.Update(ctx, ann, n.CUID, patch)
				done <- err
			}()
			<-gate.began
			return done
		}
		quick := func(what string, f func(ctx context.Context) error) {
			t.Helper()
			qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			if err := f(qctx); err != nil {
				t.Fatalf("%s while an update's render was held: %v", what, err)
			}
		}
		retitle := func(title string) func(ctx context.Context) error {
			return func(ctx context.Context) error {
				_, err := core.Update(ctx, ann, n.CUID, note.Patch{Title: note.Optional[string]{Set: true, Value: &title}})
				return err
			}
		}
		read := func() note.Publication {
			t.Helper()
			v, err := reader.ReadView(ctx, n.CUID)
			if err != nil {
				t.Fatal(err)
			}
			return v.Publication
		}

		second := "second words, wait"
		done := update(note.Patch{Content: &second})
		quick("another account's publish", func(ctx context.Context) error {
			_, err := core.Publish(ctx, bob, note.Draft{Content: "bob's words"})
			return err
		})
		quick("a title for the note", retitle("Retitled"))
		gate.release <- struct{}{} // The render read the note before its title: rendered again.
		<-gate.began
		gate.release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatalf("the update after a change meanwhile: %v", err)
		}
		if p := read(); p.Content != second || deref(p.Title) != "Retitled" || !strings.Contains(p.HTML, "second words") {
			t.Errorf("after the update: content %q, title %q, html %q", p.Content, deref(p.Title), p.HTML)
		}

		third := "third words, wait"
		done = update(note.Patch{Content: &third, IfMatch: []string{read().ETag}})
		quick("a title for the note", retitle("Again"))
		gate.release <- struct{}{}
		if err := <-done; !errors.Is(err, note.ErrStale) {
			t.Errorf("an If-Match update after a change meanwhile: %v, want ErrStale", err)
		}

		done = update(note.Patch{Content: &third})
		quick("a title for the note", retitle("Once"))
		gate.release <- struct{}{}
		<-gate.began
		quick("a title for the note", retitle("Twice"))
		gate.release <- struct{}{}
		if err := <-done; !errors.Is(err, note.ErrBusy) {
			t.Errorf("an update after two changes meanwhile: %v, want ErrBusy", err)
		}
		if p := read(); p.Content != second || deref(p.Title) != "Twice" {
			t.Errorf("a busy update changed the note: content %q, title %q", p.Content, deref(p.Title))
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
