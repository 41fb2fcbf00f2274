package sharenote_test

import (
	"context"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/wire"
)

// The tests of issue 33's second finding: `publish --prune` unshared publications of other
// vaults and of the API, and `--dry-run` did not say what the run would do.

// pastTense is the word a run prints for what its dry run says it would do.
var pastTense = map[string]string{"publish": "published", "update": "updated", "unchanged": "unchanged",
	"move": "moved", "overwrite": "overwritten", "unshare": "unshared"}

// dryRun runs publish --dry-run with args and returns its exit status, its action lines
// (those of pastTense's words: the word, the URL, the path) by path, and its stderr.
func (f *fixture) dryRun(args ...string) (int, map[string]outcome, string) {
	f.t.Helper()
	code, out, errOut := f.run(nil, append([]string{"publish", "--dry-run"}, args...)...)
	lines := map[string]outcome{}
	for line := range strings.Lines(out) {
		fields := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if _, ok := pastTense[fields[0]]; !ok {
			continue
		}
		if len(fields) != 3 {
			f.t.Fatalf("publish --dry-run %q printed %q", args, line)
		}
		if _, twice := lines[fields[2]]; twice {
			f.t.Fatalf("publish --dry-run %q printed two actions for %s", args, fields[2])
		}
		lines[fields[2]] = outcome{fields[0], fields[1], fields[2]}
	}
	return code, lines, errOut
}

// sameActions fails unless the dry run's lines say what the run did, note by note: the
// same paths, the same action, the same URL (a new publication's is not known before).
func sameActions(t *testing.T, dry, ran map[string]outcome) {
	t.Helper()
	if !slices.Equal(slices.Sorted(maps.Keys(dry)), slices.Sorted(maps.Keys(ran))) {
		t.Errorf("the dry run listed %v, the run did %v", slices.Sorted(maps.Keys(dry)), slices.Sorted(maps.Keys(ran)))
	}
	for path, d := range dry {
		r, ok := ran[path]
		if !ok {
			continue
		}
		if pastTense[d.what] != r.what || (d.what != "publish" && d.url != r.url) {
			t.Errorf("%s: the dry run said %s %s, the run %s %s", path, d.what, d.url, r.what, r.url)
		}
	}
}

// apiPublish publishes a note with a path through the API, not the client command.
func (f *fixture) apiPublish(path string) string {
	f.t.Helper()
	c := &client.Client{BaseURL: f.URL, Token: f.acc.Token}
	res, err := c.Publish(context.Background(), wire.PublishRequest{Content: "# Through the API\n", Path: &path}, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return res.URL
}

// live fails unless every URL still serves its page.
func (f *fixture) live(what string, urls ...string) {
	f.t.Helper()
	for _, u := range urls {
		if got := f.page(u).Status; got != http.StatusOK {
			f.t.Errorf("%s: %s answers %d; want it still published", what, u, got)
		}
	}
}

// changesSent counts the changes a proxy passed on.
func changesSent(p *proxy) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k, v := range p.n {
		if strings.HasPrefix(k, "POST /api/publish") || strings.HasPrefix(k, "PATCH ") || strings.HasPrefix(k, "POST /api/unshare") {
			n += v
		}
	}
	return n
}

// userVault writes a vault (with .obsidian/) of the user's under base and publishes it
// whole; it returns the vault's folder and the URLs by path.
func (f *fixture) userVault(base string, notes ...string) (string, map[string]outcome) {
	f.t.Helper()
	dir := filepath.Join(base, "Vault")
	files := map[string][]byte{".obsidian/app.json": []byte("{}")}
	for _, n := range notes {
		files[n] = []byte("# " + n + "\n")
	}
	write(f.t, dir, files)
	code, lines, errOut := f.publishVault(dir)
	if code != 0 || len(lines) != len(notes) {
		f.t.Fatalf("publish the user's vault: exit %d, %v, stderr %q", code, lines, errOut)
	}
	return dir, lines
}

func urls(lines map[string]outcome) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.url)
	}
	return out
}

// TestPruneOfAFolderWithoutObsidianTouchesOnlyItsOwnNotes: a CI job's
// `publish --prune --yes CI/docs` (no .obsidian/ above, so the folder is its vault's root)
// unshared the notes of the user's vault and those published through the API. It
// unshares only what it published from that folder and is gone, and its dry run lists
// exactly what it does.
func TestPruneOfAFolderWithoutObsidianTouchesOnlyItsOwnNotes(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	base := t.TempDir()
	_, user := f.userVault(base, "Garden/a.md", "Garden/b.md", "Top.md")
	api := []string{f.apiPublish("Garden/api.md"), f.apiPublish("api.md")}
	docs := filepath.Join(base, "repo", "CI", "docs")
	write(t, docs, map[string][]byte{"d1.md": []byte("# One\n"), "d2.md": []byte("# Two\n")})

	code, dry, errOut := f.dryRun("--prune", docs)
	if code != 0 || !strings.Contains(errOut, "nothing to unshare") {
		t.Errorf("first dry run: exit %d, stderr %q; want 0 and that nothing was published from this vault", code, errOut)
	}
	code, ran, errOut := f.publishVault("--prune", "--yes", docs)
	if code != 0 {
		t.Fatalf("first run: exit %d, stderr %q", code, errOut)
	}
	sameActions(t, dry, ran)
	f.live("the user's vault and the API's notes after the CI job's first run", append(urls(user), api...)...)

	if err := os.Remove(filepath.Join(docs, "d2.md")); err != nil {
		t.Fatal(err)
	}
	code, dry, errOut = f.dryRun("--prune", docs)
	if d := dry["d2.md"]; code != 0 || d.what != "unshare" || len(dry) != 2 {
		t.Errorf("second dry run: exit %d, %v, stderr %q; want d2.md unshared, d1.md unchanged", code, dry, errOut)
	}
	code, ran2, errOut := f.publishVault("--prune", "--yes", docs)
	if code != 0 || ran2["d2.md"].what != "unshared" || ran2["d2.md"].url != ran["d2.md"].url {
		t.Errorf("second run: exit %d, %v, stderr %q; want d2.md unshared", code, ran2, errOut)
	}
	sameActions(t, dry, ran2)
	f.live("the user's vault and the API's notes after the CI job's second run", append(append(urls(user), api...), ran["d1.md"].url)...)
}

// TestPruneRefusedWhenTheVaultRootMoved: an empty .obsidian/ planted in a synced
// subfolder (or the vault's own removed) makes the subfolder a vault root of its own;
// `publish --prune --yes Sub` then unshared every publication of the account. The
// mapping knows the notes of Sub were published from the vault above, so --prune is
// refused (exit 2, nothing sent, the dry run as well) until the root is given with
// --vault.
func TestPruneRefusedWhenTheVaultRootMoved(t *testing.T) {
	for _, tc := range []struct {
		name string
		move func(vault string) error
	}{
		{"an empty .obsidian/ planted in a subfolder", func(vault string) error { return os.Mkdir(filepath.Join(vault, "Sub", ".obsidian"), 0o755) }},
		{"the vault's .obsidian/ removed", func(vault string) error { return os.RemoveAll(filepath.Join(vault, ".obsidian")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testkit.SQLiteBackend(t))
			p := startProxy(t, f)
			f.env["SHARE_SERVER"] = p.URL
			vault, user := f.userVault(t.TempDir(), "Sub/s1.md", "Sub/s2.md", "Top.md")
			if err := tc.move(vault); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(vault, "Sub", "s2.md")); err != nil {
				t.Fatal(err)
			}
			sub := filepath.Join(vault, "Sub")
			before := changesSent(p)
			for _, args := range [][]string{{"publish", "--prune", "--yes", sub}, {"publish", "--dry-run", "--prune", sub}} {
				code, out, errOut := f.run(nil, args...)
				if code != 2 || !strings.Contains(errOut, "--vault "+vault) || strings.Contains(out, "unshare") || strings.Contains(errOut, "usage") {
					t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and the root to give with --vault", args, code, out, errOut)
				}
			}
			if n := changesSent(p) - before; n != 0 {
				t.Errorf("the refused runs sent %d changes", n)
			}
			f.live("after the refused prune", urls(user)...)

			code, lines, errOut := f.publishVault("--prune", "--yes", "--vault", vault, sub)
			if code != 0 || lines["Sub/s2.md"].what != "unshared" || len(lines) != 2 {
				t.Errorf("with --vault: exit %d, %v, stderr %q; want Sub/s2.md unshared, Sub/s1.md unchanged", code, lines, errOut)
			}
			f.live("Top.md and Sub/s1.md after the prune with --vault", user["Top.md"].url, user["Sub/s1.md"].url)
		})
	}
}

// TestPruneLeavesWhatTheAPIPublished: notes published through the API with paths under
// the folder are not the client's to unshare.
func TestPruneLeavesWhatTheAPIPublished(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	vault, user := f.userVault(t.TempDir(), "Garden/a.md", "Garden/b.md")
	api := []string{f.apiPublish("Garden/api.md"), f.apiPublish("Garden/Deep/api2.md")}
	if err := os.Remove(filepath.Join(vault, "Garden", "b.md")); err != nil {
		t.Fatal(err)
	}
	garden := filepath.Join(vault, "Garden")
	code, dry, errOut := f.dryRun("--prune", garden)
	if code != 0 || dry["Garden/b.md"].what != "unshare" || len(dry) != 2 {
		t.Errorf("dry run: exit %d, %v, stderr %q; want Garden/b.md unshared, Garden/a.md unchanged", code, dry, errOut)
	}
	code, ran, errOut := f.publishVault("--prune", "--yes", garden)
	if code != 0 || ran["Garden/b.md"].url != user["Garden/b.md"].url {
		t.Errorf("run: exit %d, %v, stderr %q", code, ran, errOut)
	}
	sameActions(t, dry, ran)
	f.live("the API's notes", api...)
}

// TestPruneInAFreshCheckoutUnsharesNothing: a checkout with no mapping (a CI runner, a
// new machine) prunes nothing and says so; the dry run lists exactly what the run does,
// the publications of the same paths it overwrites among them (with --yes).
func TestPruneInAFreshCheckoutUnsharesNothing(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	_, user := f.userVault(t.TempDir(), "Garden/a.md", "Garden/b.md")
	api := f.apiPublish("Garden/api.md")

	checkout := filepath.Join(t.TempDir(), "checkout")
	write(t, checkout, map[string][]byte{".obsidian/app.json": []byte("{}"), "Garden/a.md": []byte("# a, edited in the checkout\n"),
		"Garden/new.md": []byte("# New\n")})
	f.env["XDG_CONFIG_HOME"] = t.TempDir() // no mapping, logged in from the environment
	code, dry, errOut := f.dryRun("--prune", filepath.Join(checkout, "Garden"))
	if code != 0 || !strings.Contains(errOut, "nothing to unshare") || dry["Garden/a.md"].what != "overwrite" ||
		dry["Garden/new.md"].what != "publish" || len(dry) != 2 {
		t.Errorf("dry run: exit %d, %v, stderr %q; want a.md overwritten, new.md published, nothing unshared, and why", code, dry, errOut)
	}
	if !strings.Contains(errOut, "overwrite 1") {
		t.Errorf("dry run's summary %q does not count the overwrite", errOut)
	}
	code, ran, errOut := f.publishVault("--prune", "--yes", filepath.Join(checkout, "Garden"))
	if code != 0 || !strings.Contains(errOut, "overwritten 1") {
		t.Errorf("run: exit %d, %v, stderr %q; want 0 and the overwrite counted", code, ran, errOut)
	}
	sameActions(t, dry, ran)
	f.live("the account's other notes", user["Garden/b.md"].url, api)
}

// TestOverwriteOfAnUnknownPublicationNeedsYes: a note that the mapping does not know,
// whose path the account already has, would overwrite that publication in place: without
// a terminal and without --yes the run exits 2 before sending anything.
func TestOverwriteOfAnUnknownPublicationNeedsYes(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	p := startProxy(t, f)
	f.env["SHARE_SERVER"] = p.URL
	theirs := f.apiPublish("note.md")
	dir := t.TempDir()
	write(t, dir, map[string][]byte{"note.md": []byte("# Crafted\n"), "other.md": []byte("# Other\n")})
	before := changesSent(p)
	code, out, errOut := f.run(nil, "publish", dir)
	// Not a usage error: the command line was right, the change needs a yes.
	if code != 2 || out != "" || !strings.Contains(errOut, "--yes") || !strings.Contains(errOut, "note.md") ||
		!strings.Contains(errOut, "publish: not done: ") || strings.Contains(errOut, "usage") {
		t.Errorf("without --yes: exit %d, stdout %q, stderr %q; want 2, naming note.md and --yes", code, out, errOut)
	}
	if n := changesSent(p) - before; n != 0 || f.publications() != 1 {
		t.Errorf("without --yes: %d changes sent, %d publications; want nothing sent", n, f.publications())
	}
	n, err := (&client.Client{BaseURL: f.URL}).Note(context.Background(), cuidOf(theirs))
	if err != nil || !strings.Contains(n.Content, "Through the API") {
		t.Errorf("the publication: %v, %v; want it as the API published it", n, err)
	}
	code, lines, errOut := f.publishVault("--yes", dir)
	if code != 0 || lines["note.md"].what != "overwritten" || lines["note.md"].url != theirs || lines["other.md"].what != "published" {
		t.Errorf("with --yes: exit %d, %v, stderr %q; want note.md overwritten in place", code, lines, errOut)
	}
}
