package sharenote_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/testkit/obsidian"
)

// outcome is one line of publish: what happened to a note, its URL and its path.
type outcome struct{ what, url, path string }

// publishVault runs publish with args and returns its exit status, its lines by path,
// and its stderr.
func (f *fixture) publishVault(args ...string) (int, map[string]outcome, string) {
	f.t.Helper()
	code, out, errOut := f.run(nil, append([]string{"publish"}, args...)...)
	lines := map[string]outcome{}
	for line := range strings.Lines(out) {
		fields := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(fields) != 3 {
			f.t.Fatalf("publish %q printed %q", args, line)
		}
		lines[fields[2]] = outcome{fields[0], fields[1], fields[2]}
	}
	return code, lines, errOut
}

// page reads a published page by its URL.
func (f *fixture) page(url string) *testkit.Response {
	f.t.Helper()
	return f.Do(f.t, testkit.Request{Method: http.MethodGet, Path: "/s/" + cuidOf(url)})
}

// TestVaultPublishedWithTheClient is the vault's end-to-end test: the fixture vault
// published with `sharenote publish <folder>`, each page checked by the independent
// reading of Obsidian's rules (obsidian.CheckPages): every link goes to the right note and
// anchor, every image shows, no marker text is left, titles are file names; a second run
// sends nothing; a moved note keeps its URL; --prune unshares a deleted one and one that
// now says publish: false; a symlink out of the vault is refused with a warning; a
// missing image is a warning.
func TestVaultPublishedWithTheClient(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		publishTheFixtureVault(t, newFixture(t, b))
	})
}

// publishTheFixtureVault is TestVaultPublishedWithTheClient on one backend.
func publishTheFixtureVault(t *testing.T, f *fixture) {
	p := startProxy(t, f)
	f.env["SHARE_SERVER"] = p.URL
	dir, v := fixtureVault(t)
	published := v.Published()
	code, lines, errOut := f.publishVault(dir)
	if code != 0 || len(lines) != len(published) {
		t.Fatalf("publish: exit %d, %d notes, want %d; stderr %q", code, len(lines), len(published), errOut)
	}
	for _, want := range []string{"warning: Edge.md: outside.png: a symlink that leads out of the vault", "warning: Images.md: missing.png: no such file",
		"published " + strconv.Itoa(len(published)) + ", updated 0, unchanged 0, failed 0"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	checkPages(t, v, f.pages(published, lines))

	before := p.count("POST /api/publish")
	code, lines, errOut = f.publishVault(dir)
	if code != 0 || p.count("POST /api/publish") != before || patches(p, lines) != 0 {
		t.Errorf("second run: exit %d, %d publishes and %d updates sent; want nothing sent; stderr %q",
			code, p.count("POST /api/publish")-before, patches(p, lines), errOut)
	}
	if !strings.Contains(errOut, "published 0, updated 0, unchanged "+strconv.Itoa(len(published))+", failed 0") {
		t.Errorf("second run's summary: %q", errOut)
	}

	willow := lines["Garden/Trees/Willow.md"].url
	if err := os.Rename(filepath.Join(dir, "Garden/Trees/Willow.md"), filepath.Join(dir, "Garden/Willow.md")); err != nil {
		t.Fatal(err)
	}
	code, lines, errOut = f.publishVault(dir)
	if got := lines["Garden/Willow.md"]; code != 0 || got.what != "moved" || got.url != willow || f.publications() != len(published) {
		t.Errorf("a moved note: exit %d, %+v, %d publications; want moved at %s; stderr %q", code, got, f.publications(), willow, errOut)
	}
	pruneTheFixtureVault(t, f, dir, lines)
}

// fixtureVault copies the fixture vault, adds a note that embeds a symlink out of it, and
// loads it.
func fixtureVault(t *testing.T) (string, *obsidian.Vault) {
	base := t.TempDir()
	dir := filepath.Join(base, "vault")
	if err := obsidian.CopyFixture(dir); err != nil {
		t.Fatal(err)
	}
	write(t, base, map[string][]byte{"private.png": testkit.PNG(t), "vault/Edge.md": []byte("# Edge\n\n![[outside.png]]\n")})
	if err := os.Symlink(filepath.Join(base, "private.png"), filepath.Join(dir, "Attachments", "outside.png")); err != nil {
		t.Fatal(err)
	}
	v, err := obsidian.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, v
}

// pages reads the page of each published note.
func (f *fixture) pages(published []*obsidian.Note, lines map[string]outcome) map[string]obsidian.Page {
	pages := map[string]obsidian.Page{}
	for _, n := range published {
		l := lines[n.Path]
		if l.what != "published" {
			f.t.Errorf("%s: %q, want published", n.Path, l.what)
			continue
		}
		resp := f.page(l.url)
		if resp.Status != http.StatusOK {
			f.t.Errorf("%s: page %d", n.Path, resp.Status)
		}
		pages[n.Path] = obsidian.Page{URL: l.url, HTML: resp.Body}
	}
	return pages
}

// pruneTheFixtureVault deletes a note and marks another publish: false, and checks that
// --prune asks for --yes without a terminal, that --dry-run lists what it would unshare,
// and that --prune --yes unshares both.
func pruneTheFixtureVault(t *testing.T, f *fixture, dir string, lines map[string]outcome) {
	soup, roadmap := lines["Recipes/Soup.md"].url, lines["Projects/Roadmap.md"].url
	if err := os.Remove(filepath.Join(dir, "Recipes/Soup.md")); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := f.publishVault("--prune", dir); code != 2 || !strings.Contains(errOut, "--yes") || f.page(soup).Status != http.StatusOK {
		t.Errorf("--prune without a terminal or --yes: exit %d, stderr %q; want 2 and nothing unshared", code, errOut)
	}
	code, out, errOut := f.run(nil, "publish", "--dry-run", "--prune", dir)
	for _, want := range []string{"note\tImages.md\t", "attachment\tflow.svg.png\tAttachments/Diagrams/flow.svg\n", "unshare\t" + soup + "\tRecipes/Soup.md\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("--dry-run: exit %d, stdout lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
	src, err := os.ReadFile(filepath.Join(dir, "Projects/Roadmap.md"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string][]byte{"Projects/Roadmap.md": append([]byte("---\npublish: false\n---\n"), src...)})
	code, lines, errOut = f.publishVault("--prune", "--yes", dir)
	for path, url := range map[string]string{"Recipes/Soup.md": soup, "Projects/Roadmap.md": roadmap} {
		if got := lines[path]; code != 0 || got.what != "unshared" || f.page(url).Status != http.StatusNotFound {
			t.Errorf("--prune --yes, %s: exit %d, %+v, page %d; want unshared; stderr %q", path, code, got, f.page(url).Status, errOut)
		}
	}
}

// checkPages checks the pages with obsidian.CheckPages and reports every problem.
func checkPages(t *testing.T, v *obsidian.Vault, pages map[string]obsidian.Page) {
	t.Helper()
	r := v.CheckPages(pages)
	t.Log(r)
	for _, c := range r.Links {
		if !c.Working {
			t.Errorf("%s:%d %s: %s", c.From, c.Line, c.Raw, c.Problem)
		}
	}
	for _, l := range r.Leftovers {
		t.Errorf("%s: %s %q", l.Path, l.What, l.Text)
	}
	for _, i := range r.Images {
		t.Errorf("%s: %d images shown, want %d", i.Path, i.Got, i.Want)
	}
	for _, ti := range r.Titles {
		t.Errorf("%s: title %q, want %q", ti.Path, ti.Got, ti.Want)
	}
}

// patches counts the updates the proxy passed on for the publications of lines.
func patches(p *proxy, lines map[string]outcome) int {
	n := 0
	for _, l := range lines {
		n += p.count("PATCH /api/notes/" + cuidOf(l.url))
	}
	return n
}

// TestClientUpdatesWhatAnOlderClientPublishedByFile: a note the client published before
// notes had vault paths (its mapping by absolute file path) is updated in place and
// given its path, not published a second time.
func TestClientUpdatesWhatAnOlderClientPublishedByFile(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	cuid := f.publish("Old")
	page, err := (&client.Client{BaseURL: f.URL, Token: f.acc.Token}).List(context.Background(), client.ListOptions{})
	if err != nil || len(page.Notes) != 1 {
		t.Fatalf("list: %v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "Old.md")
	write(t, dir, map[string][]byte{"Old.md": []byte("# Old, edited\n")})
	legacy := map[string]any{"servers": map[string]any{f.URL: map[string]any{file: map[string]any{
		"cuid": cuid, "url": page.Notes[0].URL, "etag": page.Notes[0].ETag, "content_sha256": "0", "images": map[string]any{}}}}}
	b, _ := json.Marshal(legacy)
	write(t, f.conf, map[string][]byte{"sharenote/published.json": b})
	if outcome, url := f.published(file); outcome != "updated" || url != page.Notes[0].URL || f.publications() != 1 {
		t.Errorf("%s %s with %d publications; want updated in place", outcome, url, f.publications())
	}
	page, _ = (&client.Client{BaseURL: f.URL, Token: f.acc.Token}).List(context.Background(), client.ListOptions{})
	if p := page.Notes[0].Path; p == nil || *p != "Old.md" {
		t.Errorf("path %v, want Old.md", p)
	}
}
