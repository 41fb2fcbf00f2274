package sharenote_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/testkit/obsidian"
)

// realVault is where build/fetch-vault.sh puts the Obsidian help vault (obsidianmd/
// obsidian-help, en/), which is not in the repository: its repository has no licence.
// SHARE_REAL_VAULT names another.
func realVault(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SHARE_REAL_VAULT")
	if dir == "" {
		dir = filepath.Join("..", "..", ".tools", "vaults", "obsidian-help")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no real vault at %s (build/fetch-vault.sh puts one there, or set SHARE_REAL_VAULT)", dir)
	}
	return dir
}

// TestARealVaultPublishesAsObsidianShowsIt publishes a public vault no one here wrote, as
// is, with one `sharenote publish <folder>` on Postgres and Redis (the account's real
// budget of 60 changes a minute, refilled in real time): every note is published and
// titled by its file name, no answer is 429, and at least 99 % of the links that Obsidian
// resolves work on the pages, by the independent reading of its rules (obsidian.CheckPages).
func TestARealVaultPublishesAsObsidianShowsIt(t *testing.T) {
	src := realVault(t)
	if testing.Short() {
		t.Skip("-short: a real vault takes minutes at 60 changes a minute")
	}
	f := newFixture(t, testkit.PostgresBackend(t))
	p := startProxy(t, f)
	f.env["SHARE_SERVER"] = p.URL
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	v, err := obsidian.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	code, lines, errOut := f.publishVault(dir)
	published := v.Published()
	if code != 0 || len(lines) != len(published) {
		t.Errorf("publish: exit %d, %d notes, want %d", code, len(lines), len(published))
	}
	if strings.Contains(errOut, "rate limited") || p.count("429") > 0 {
		t.Errorf("the run met %d answers 429:\n%s", p.count("429"), errOut)
	}
	t.Logf("summary: %s", lastLine(errOut))
	pages := map[string]obsidian.Page{}
	for _, n := range published {
		l, ok := lines[n.Path]
		if !ok || l.what != "published" {
			t.Errorf("%s: %+v, want published", n.Path, l)
			continue
		}
		resp := f.page(l.url)
		if resp.Status != http.StatusOK {
			t.Errorf("%s: page %d", n.Path, resp.Status)
		}
		pages[n.Path] = obsidian.Page{URL: l.url, HTML: resp.Body}
	}
	r := v.CheckPages(pages)
	t.Log(r)
	if r.Ratio() < 0.99 {
		for _, c := range r.Links {
			if !c.Working {
				t.Logf("%s:%d %s: %s", c.From, c.Line, c.Raw, c.Problem)
			}
		}
		t.Errorf("%.1f %% of the links Obsidian resolves work, want at least 99 %%", 100*r.Ratio())
	}
	for _, ti := range r.Titles {
		t.Errorf("%s: title %q, want %q", ti.Path, ti.Got, ti.Want)
	}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
