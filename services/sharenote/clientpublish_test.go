package sharenote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/wire"
)

// write creates the files of a note folder under dir.
func write(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// published runs publish of one note and returns its outcome word and URL.
func (f *fixture) published(args ...string) (outcome, url string) {
	f.t.Helper()
	code, out, errOut := f.run(nil, append([]string{"publish"}, args...)...)
	fields := strings.Split(strings.TrimSuffix(out, "\n"), "\t")
	if code != 0 || len(fields) != 3 {
		f.t.Fatalf("publish %q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
	}
	return fields[0], fields[1]
}

func cuidOf(url string) string { return url[strings.LastIndex(url, "/")+1:] }

// image reads an image of a publication back through the API.
func (f *fixture) image(cuid, name string) []byte {
	f.t.Helper()
	resp := f.Do(f.t, testkit.Request{Method: http.MethodGet, Path: "/api/images/" + f.acc.UserCUID + "/" + cuid + "/" + url.PathEscape(name)})
	resp.Expect(f.t, http.StatusOK, "")
	return resp.Body
}

func (f *fixture) versions(cuid string) int {
	f.t.Helper()
	vs, err := (&client.Client{BaseURL: f.URL, Token: f.acc.Token}).Versions(context.Background(), cuid)
	if err != nil {
		f.t.Fatal(err)
	}
	return len(vs.Versions)
}

func (f *fixture) publications() int {
	f.t.Helper()
	page, err := (&client.Client{BaseURL: f.URL, Token: f.acc.Token}).List(context.Background(), client.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return len(page.Notes)
}

const folderNote = "---\ntitle: Trip\n---\n# Trip\n\n![[a.png]]\n\n![the river](sub/a.png \"River\")\n\nSee [[a.png|the map]].\n\n" +
	"`![[code.png]]` and ![remote](https://example.com/x.png) stay.\n"

func TestPublishUploadsImagesAndUpdatesInPlace(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		dir := t.TempDir()
		top, sub := testkit.PNG(t), testkit.PNGOfSize(t, 3000)
		write(t, dir, map[string][]byte{"note.md": []byte(folderNote), "a.png": top, "sub/a.png": testkit.PNGOfSize(t, 2000)})
		file := filepath.Join(dir, "note.md")

		outcome, link := f.published(file)
		cuid := cuidOf(link)
		if outcome != "published" || link != f.URL+"/s/"+cuid {
			t.Fatalf("publish = %s %s", outcome, link)
		}
		if got := f.image(cuid, "a.png"); !bytes.Equal(got, top) {
			t.Errorf("a.png read back differs (%d bytes, want %d)", len(got), len(top))
		}
		if got := f.image(cuid, "a-2.png"); !bytes.Equal(got, testkit.PNGOfSize(t, 2000)) {
			t.Errorf("sub/a.png, uploaded as a-2.png, read back differs (%d bytes)", len(got))
		}
		n, err := (&client.Client{BaseURL: f.URL}).Note(context.Background(), cuid)
		if err != nil {
			t.Fatal(err)
		}
		imageURL := f.URL + "/api/images/" + f.acc.UserCUID + "/" + cuid + "/"
		for _, want := range []string{"![a.png](" + imageURL + "a.png)", "![the river](" + imageURL + "a-2.png \"River\")",
			"[the map](" + imageURL + "a.png)", "`![[code.png]]`", "(https://example.com/x.png)"} {
			if !strings.Contains(n.Content, want) {
				t.Errorf("content %q lacks %q", n.Content, want)
			}
		}
		if n.Title == nil || *n.Title != "Trip" {
			t.Errorf("title %v, want the frontmatter's", n.Title)
		}

		write(t, dir, map[string][]byte{"note.md": []byte(folderNote + "\nMore.\n")})
		if outcome, again := f.published(file); outcome != "updated" || again != link || f.versions(cuid) != 1 {
			t.Errorf("text changed: %s %s with %d versions; want updated in place, one version", outcome, again, f.versions(cuid))
		}
		if outcome, _ := f.published(file); outcome != "unchanged" || f.versions(cuid) != 1 {
			t.Errorf("nothing changed: %s with %d versions; want unchanged, nothing sent", outcome, f.versions(cuid))
		}
		write(t, dir, map[string][]byte{"sub/a.png": sub})
		code, out, errOut := f.run(nil, "publish", "--json", file)
		validate(t, http.MethodPatch, "/api/notes/"+cuid, out)
		if code != 0 || !strings.Contains(out, `"cuid":"`+cuid+`"`) {
			t.Fatalf("image changed: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		if got := f.image(cuid, "a-2.png"); !bytes.Equal(got, sub) {
			t.Errorf("the changed image was not replaced")
		}
		if f.publications() != 1 {
			t.Errorf("%d publications, want the one updated in place", f.publications())
		}

		code, out, errOut = f.run(nil, "publish", "--new", "--json", file)
		validate(t, http.MethodPost, "/api/publish", out)
		var res wire.PublishResponse
		if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Cuid == cuid {
			t.Fatalf("--new: exit %d, stdout %q, stderr %q; want another publication", code, out, errOut)
		}
		// The mapping follows the new copy.
		if outcome, again := f.published(file); outcome != "unchanged" || again != res.URL {
			t.Errorf("after --new: %s %s, want unchanged %s", outcome, again, res.URL)
		}
	})
}

// TestPublishWarnsOfFilesItCannotSendAndPublishesWithoutThem: a file that cannot be
// found or read, or that the server would refuse, is a warning line, and the note is
// published without it: a file the client cannot send never stops a publish.
func TestPublishWarnsOfFilesItCannotSendAndPublishesWithoutThem(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	dir := t.TempDir()
	write(t, dir, map[string][]byte{
		"note.md":   []byte("![[gone.png]]\n![](big.png)\n![](fake.jpg)\n![[ok.png]]\n"),
		"big.png":   testkit.PNGOfSize(t, note.MaxImageBytes+1),
		"fake.jpg":  testkit.PNG(t),
		"ok.png":    testkit.PNG(t),
		"other.txt": []byte("not referenced"),
	})
	code, out, errOut := f.run(nil, "publish", filepath.Join(dir, "note.md"))
	for _, want := range []string{"warning: note.md: gone.png: no such file", "big.png: 5242881 bytes, over the limit", "fake.jpg", "not a JPEG",
		"published 1, updated 0, unchanged 0, failed 0; warnings: file_not_sent 3\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	if code != 0 || !strings.HasPrefix(out, "published\t") || f.publications() != 1 {
		t.Errorf("exit %d, stdout %q, %d publications; want the note published", code, out, f.publications())
	}
	if got := f.image(cuidOf(strings.Split(out, "\t")[1]), "ok.png"); !bytes.Equal(got, testkit.PNG(t)) {
		t.Error("the image that could be sent was not")
	}
}

func TestPublishChecksTheStorageQuota(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	dir := t.TempDir()
	write(t, dir, map[string][]byte{"note.md": []byte("![[a.png]]\n"), "a.png": testkit.PNGOfSize(t, 4000)})
	// 3000 bytes of the default 1,000,000,000 left.
	if err := testkit.OpenDB(t, f.Backend).Exec("UPDATE accounts SET image_bytes_used = ? WHERE cuid = ?", 1_000_000_000-3000, f.acc.UserCUID).Error; err != nil {
		t.Fatal(err)
	}
	code, _, errOut := f.run(nil, "publish", filepath.Join(dir, "note.md"))
	if code != 1 || !strings.Contains(errOut, "need 3.9 KiB of image storage, and 2.9 KiB of your 953.7 MiB is free") || f.publications() != 0 {
		t.Errorf("exit %d, stderr %q; want 1 before anything is sent", code, errOut)
	}
}

// faultyProxy passes requests to a server, except the publish and update requests it is
// told to fail: answered 429 or cut off, once each. It counts what reaches the server.
type faultyProxy struct {
	URL   string
	mu    sync.Mutex
	fail  string // "429", "drop" or ""
	sent  map[string]int
	fails int
}

func startFaultyProxy(t *testing.T, target string) *faultyProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultyProxy{sent: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mutation := r.Method == http.MethodPost && r.URL.Path == "/api/publish" || r.Method == http.MethodPatch
		p.mu.Lock()
		fail := p.fail
		if mutation && fail != "" {
			p.fail = ""
			p.fails++
		}
		p.mu.Unlock()
		switch {
		case !mutation || fail == "":
			p.mu.Lock()
			p.sent[r.Method]++
			p.mu.Unlock()
			rp.ServeHTTP(w, r)
		case fail == "429":
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":"rate_limited","message":"Too many requests."}`))
		default:
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}
	}))
	t.Cleanup(s.Close)
	p.URL = s.URL
	return p
}

func (p *faultyProxy) failNext(how string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail = how
}

func (p *faultyProxy) counts() (sent map[string]int, fails int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sent = map[string]int{}
	for k, v := range p.sent {
		sent[k] = v
	}
	return sent, p.fails
}

func TestFailedPublishAndUpdateAreReportedNotRetried(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	p := startFaultyProxy(t, f.URL)
	f.env["SHARE_SERVER"] = p.URL
	dir := t.TempDir()
	file := filepath.Join(dir, "note.md")
	write(t, dir, map[string][]byte{"note.md": []byte("# One\n![[a.png]]\n"), "a.png": testkit.PNG(t)})

	for _, tc := range []struct{ fault, want string }{{"429", "rate_limited"}, {"drop", "may or may not have been published"}} {
		p.failNext(tc.fault)
		code, out, errOut := f.run(nil, "publish", file)
		if code != 1 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("publish, %s: exit %d, stdout %q, stderr %q; want 1 and the error", tc.fault, code, out, errOut)
		}
	}
	if sent, fails := p.counts(); sent[http.MethodPost] != 1 || fails != 2 || f.publications() != 0 {
		t.Errorf("POSTs passed on %d (the login), failed %d, publications %d: a publish was retried", sent[http.MethodPost], fails, f.publications())
	}

	_, link := f.published(file)
	write(t, dir, map[string][]byte{"note.md": []byte("# Two\n![[a.png]]\n"), "a.png": testkit.PNGOfSize(t, 3000)})
	for _, fault := range []string{"429", "drop"} {
		p.failNext(fault)
		if code, _, errOut := f.run(nil, "publish", file); code != 1 {
			t.Errorf("update, %s: exit %d, stderr %q; want 1", fault, code, errOut)
		}
	}
	if sent, _ := p.counts(); sent[http.MethodPatch] != 0 || f.versions(cuidOf(link)) != 0 {
		t.Errorf("PATCHes passed on %d, versions %d: an update was retried", sent[http.MethodPatch], f.versions(cuidOf(link)))
	}
	// The failed updates left the mapping as it was: the next one still updates in place.
	if outcome, again := f.published(file); outcome != "updated" || again != link {
		t.Errorf("after the failures: %s %s, want updated %s", outcome, again, link)
	}
}

func TestStaleOrUnsharedPublicationIsReportedWithAHint(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	dir := t.TempDir()
	file := filepath.Join(dir, "note.md")
	write(t, dir, map[string][]byte{"note.md": []byte("# One\n")})
	_, link := f.published(file)
	c := &client.Client{BaseURL: f.URL, Token: f.acc.Token}
	if _, err := c.Update(context.Background(), cuidOf(link), wire.NoteUpdate{Title: wire.Set("Changed elsewhere")}, ""); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string][]byte{"note.md": []byte("# Two\n")})
	code, _, errOut := f.run(nil, "publish", file)
	for _, want := range []string{"precondition_failed", "changed elsewhere", "sharenote versions " + cuidOf(link), "--new"} {
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("stale: exit %d, stderr %q lacks %q", code, errOut, want)
		}
	}
	if _, err := c.Unshare(context.Background(), cuidOf(link)); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = f.run(nil, "publish", file)
	if code != 1 || !strings.Contains(errOut, "no longer exists") || !strings.Contains(errOut, "publishes it anew") {
		t.Errorf("unshared: exit %d, stderr %q; want 1 and that the next publish publishes it anew", code, errOut)
	}
	if outcome, again := f.published(file); outcome != "published" || again == link {
		t.Errorf("after unshared: %s %s, want a new publication", outcome, again)
	}
}

// TestPublishSendsNoFileFromOutsideTheVault is the finding that a note (one someone else
// wrote, say) could publish the reader's private files by naming them from outside its
// vault (here the note's folder, which has no .obsidian/): a reference that leaves it,
// however it is written (../, its percent-escaped form, a symlink to a file or folder
// outside), is a warning, and the file is not sent; the note is published without it.
func TestPublishSendsNoFileFromOutsideTheVault(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	for i, tc := range []struct {
		rule, body, ref, why string
		link                 func(notes, outside string) error
	}{
		{"a Markdown image up a folder", "![](../secret.png)\n", "../secret.png", "outside the vault", nil},
		{"an embed up a folder", "![[../secret.png]]\n", "../secret.png", "outside the vault", nil},
		{"a percent-escaped ../", "![](..%2Fsecret.png)\n", "../secret.png", "outside the vault", nil},
		{"a percent-escaped ../ in an embed", "![[..%2Fsecret.png]]\n", "..%2Fsecret.png", "no such file", nil},
		{"an escaped ../ escaped again", "![](..%252Fsecret.png)\n", "..%2Fsecret.png", "no such file", nil},
		{"deeper, then up twice", "![](sub/../../secret.png)\n", "sub/../../secret.png", "outside the vault", nil},
		{"a symlink to a file outside", "![[link.png]]\n", "link.png", "a symlink that leads out of the vault", func(notes, outside string) error {
			return os.Symlink(filepath.Join("..", "secret.png"), filepath.Join(notes, "link.png"))
		}},
		{"a symlink to an absolute path outside", "![](abs.png)\n", "abs.png", "a symlink that leads out of the vault", func(notes, outside string) error {
			return os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(notes, "abs.png"))
		}},
		{"a symlinked folder outside", "![](up/secret.png)\n", "up/secret.png", "a symlink that leads out of the vault", func(notes, outside string) error {
			return os.Symlink(outside, filepath.Join(notes, "up"))
		}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			outside := t.TempDir()
			notes := filepath.Join(outside, "notes")
			name := fmt.Sprintf("note%d.md", i)
			write(t, outside, map[string][]byte{"secret.png": testkit.PNG(t), "notes/" + name: []byte("# Note\n" + tc.body)})
			if tc.link != nil {
				if err := tc.link(notes, outside); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := f.run(nil, "publish", filepath.Join(notes, name))
			if want := "warning: " + name + ": " + tc.ref + ": " + tc.why; code != 0 || !strings.Contains(errOut, want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q", code, out, errOut, want)
			}
			fields := strings.Split(out, "\t")
			if len(fields) < 2 {
				t.Fatalf("stdout %q", out)
			}
			n, err := (&client.Client{BaseURL: f.URL}).Note(context.Background(), cuidOf(fields[1]))
			if err != nil || strings.Contains(n.Content, "/api/images/") {
				t.Errorf("content %q, %v; want the reference as written, no image", n.Content, err)
			}
		})
	}
}

// TestPublishFollowsSymlinksThatStayInside: the rule is about where a file is, not about
// symlinks; a link within the folder is sent, and so is a note whose folder is reached
// through a symlink.
// A folder named through a symlink is the folder it leads to (a vault reached as
// ~/notes -> ~/Dropbox/Notes): the vault itself and a folder of it, with and without
// .obsidian/ (a real vault's subfolder link was refused as "not inside the vault").
func TestPublishAFolderNamedThroughASymlink(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	real := t.TempDir()
	write(t, real, map[string][]byte{".obsidian/app.json": []byte("{}"), "Home.md": []byte("home"), "sub/Deep.md": []byte("deep")})
	links := t.TempDir()
	for name, target := range map[string]string{"vault": real, "sub": filepath.Join(real, "sub")} {
		if err := os.Symlink(target, filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
	code, lines, errOut := f.publishVault(filepath.Join(links, "vault"))
	if code != 0 || lines["Home.md"].what != "published" || lines["sub/Deep.md"].what != "published" {
		t.Fatalf("publish of the vault through a symlink: exit %d, %v, stderr %q", code, lines, errOut)
	}
	code, lines, errOut = f.dryRun(filepath.Join(links, "sub"))
	if code != 0 || lines["sub/Deep.md"].what != "unchanged" || len(lines) != 1 {
		t.Errorf("dry run of a folder through a symlink: exit %d, %v, stderr %q", code, lines, errOut)
	}
}

func TestPublishFollowsSymlinksThatStayInside(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	real := t.TempDir()
	write(t, real, map[string][]byte{"note.md": []byte("![[alias.png]]\n![](sub/a.png)\n"), "sub/a.png": testkit.PNG(t)})
	if err := os.Symlink(filepath.Join("sub", "a.png"), filepath.Join(real, "alias.png")); err != nil {
		t.Fatal(err)
	}
	via := filepath.Join(t.TempDir(), "vault")
	if err := os.Symlink(real, via); err != nil {
		t.Fatal(err)
	}
	_, link := f.published(filepath.Join(via, "note.md"))
	for _, name := range []string{"alias.png", "a.png"} {
		if got := f.image(cuidOf(link), name); !bytes.Equal(got, testkit.PNG(t)) {
			t.Errorf("%s read back differs", name)
		}
	}
}
