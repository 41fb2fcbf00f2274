//go:build unix

package sharenote_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit"
)

// The client's hostile-vault tests of issue 33 (a vault may be someone else's: a clone, a
// synced folder, a download).

// TestFIFOsInAVaultDoNotHangTheClient: a FIFO named like a note, like an image a note
// shows, and like .obsidian/app.json hung the client (opening a FIFO waits for a writer).
// Nothing that is not a regular file is opened: each is a warning, and the rest is
// published.
func TestFIFOsInAVaultDoNotHangTheClient(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	dir := t.TempDir()
	write(t, dir, map[string][]byte{"note.md": []byte("# Note\n\n![[image.png]]\n"), ".obsidian/snippets/keep": nil})
	fifos := []string{filepath.Join(dir, "x.md"), filepath.Join(dir, "image.png"), filepath.Join(dir, ".obsidian", "app.json")}
	for _, p := range fifos {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := f.run(nil, "publish", dir)
		done <- result{code, out, errOut}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Error("publish still runs after 30 s: it opened a FIFO and waits for a writer")
		r = unblock(fifos, done)
	}
	for _, want := range []string{"warning: x.md: not a regular file", "warning: note.md: image.png: not a regular file", ".obsidian/app.json: not a regular file"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("stderr %q lacks %q", r.errOut, want)
		}
	}
	if r.code != 0 || !strings.HasPrefix(r.out, "published\t") || strings.Count(r.out, "\n") != 1 {
		t.Errorf("exit %d, stdout %q; want note.md published", r.code, r.out)
	}
}

// unblock opens the write end of each FIFO, and closes it, until the run that waits on one
// of them ends, and returns what it printed.
func unblock[T any](fifos []string, done <-chan T) T {
	for {
		for _, p := range fifos {
			if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		select {
		case r := <-done:
			return r
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestControlCharactersInAVaultArePrintedQuoted: file names and reference targets with
// escape sequences (here: set the window title, clear the screen, colours) reached the
// terminal raw. Everything the client prints quotes them.
func TestControlCharactersInAVaultArePrintedQuoted(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	dir := t.TempDir()
	evil := "evil\x1b]0;owned\x07\x1b[2J\u202e.md"
	write(t, dir, map[string][]byte{
		evil:     []byte("# Evil\n"),
		"ref.md": []byte("# Ref\n\n![[\x1b[31mred\u009b2J.png]]\n\n[[\x1b[5mblink]]\n"),
	})
	for _, args := range [][]string{{"publish", "--dry-run", dir}, {"publish", dir}, {"list"}, {"publish", "--json", dir}} {
		_, out, errOut := f.run(nil, args...)
		all := out + errOut
		if i := strings.IndexFunc(all, func(r rune) bool {
			return r == 0x1b || r == 0x07 || r == 0x9b || r == '\u202e' || r < 0x20 && r != '\n' && r != '\t'
		}); i >= 0 {
			t.Errorf("%q printed a raw control character at byte %d:\n%q", args, i, all)
		}
		if args[0] == "list" || args[1] == "--json" {
			continue
		}
		for _, want := range []string{`"evil\x1b]0;owned\a\x1b[2J\u202e.md"`, `"\x1b[31mred\u009b2J.png"`} {
			if !strings.Contains(errOut+out, want) {
				t.Errorf("%q: the output lacks %s:\n%s%s", args, want, out, errOut)
			}
		}
	}
}

// TestAnImageSwappedForASymlinkAfterItWasCheckedIsNotFollowed: the client checked an
// image's real path when it read the vault and opened it again by that path when it sent
// it, so a symlink put in its place meanwhile (here while the client reads the account's
// list, between the two) sent a file from outside the vault. The image is opened once:
// what is sent is the file that was checked, and the symlink is never followed.
func TestAnImageSwappedForASymlinkAfterItWasCheckedIsNotFollowed(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	base := t.TempDir()
	checked, secret := testkit.PNG(t), testkit.PNGOfSize(t, 3000)
	write(t, base, map[string][]byte{"vault/note.md": []byte("# Note\n\n![[img.png]]\n"), "vault/img.png": checked, "secret.png": secret})
	img := filepath.Join(base, "vault", "img.png")
	swap := func() {
		tmp := filepath.Join(base, "vault", ".swap")
		if err := os.Symlink(filepath.Join(base, "secret.png"), tmp); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, img); err != nil {
			t.Error(err)
		}
	}
	u, err := url.Parse(f.URL)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	rp := httputil.NewSingleHostReverseProxy(u)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/api/user/notes" {
			once.Do(swap) // the vault was read; nothing is sent yet
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	f.env["SHARE_SERVER"] = s.URL

	code, out, errOut := f.run(nil, "publish", filepath.Join(base, "vault"))
	if target, err := os.Readlink(img); err != nil || code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; the swap: %q, %v", code, out, errOut, target, err)
	}
	fields := strings.Split(out, "\t")
	if len(fields) != 3 {
		t.Fatalf("stdout %q", out)
	}
	if got := f.image(cuidOf(fields[1]), "img.png"); !bytes.Equal(got, checked) {
		t.Errorf("sent %d bytes (the secret has %d); want the %d bytes of the file that was checked", len(got), len(secret), len(checked))
	}
}
