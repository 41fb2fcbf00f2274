package sharenote_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// TestSiteCommand: `sharenote site` shows the site; `site set --dry-run` lists the notes a
// change would list and changes nothing; without a terminal a change that lists notes
// needs --yes (exit 2, nothing changed); with it the site changes and is shown.
func TestSiteCommand(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	for _, p := range []string{"Garden/A.md", "Garden/Sub/B.md", "Private/C.md"} {
		title := strings.TrimSuffix(p[strings.LastIndex(p, "/")+1:], ".md")
		if _, err := testkit.Must(f.App.Deps().Publisher()).Publish(context.Background(), f.acc.UserCUID,
			note.Draft{Content: "# " + title, Title: &title, Path: new(p)}); err != nil {
			t.Fatal(err)
		}
	}
	show := func() string {
		t.Helper()
		code, out, errOut := f.run(nil, "site")
		if code != 0 {
			t.Fatalf("site: exit %d, %s", code, errOut)
		}
		return out
	}
	if got, want := show(), "enabled=false\nhandle=\nroots=\nhome=\ntitle=\nsite_url=\n"; got != want {
		t.Fatalf("site before any change:\n%s\nwant\n%s", got, want)
	}
	set := []string{"site", "set", "--handle", "Ada", "--root", "Garden", "--enable"}
	code, out, errOut := f.run(nil, append(set, "--dry-run")...)
	if code != 0 || out != "Garden/A.md\tA\nGarden/Sub/B.md\tB\n" {
		t.Fatalf("site set --dry-run: exit %d, stdout %q, stderr %s; want the two Garden notes", code, out, errOut)
	}
	code, _, errOut = f.run(nil, set...)
	if code != 2 || !strings.Contains(errOut, "would list 2 notes") || !strings.Contains(errOut, "--yes") {
		t.Fatalf("site set without a terminal or --yes: exit %d, %s; want 2, naming the 2 notes and --yes", code, errOut)
	}
	if got := show(); !strings.HasPrefix(got, "enabled=false\n") {
		t.Fatalf("the site changed without a yes:\n%s", got)
	}
	if code, out, errOut := f.run(nil, append(set, "--yes")...); code != 0 || !strings.Contains(out, "enabled=true\nhandle=ada\nroots=\"Garden\"\n") ||
		!strings.Contains(out, "site_url="+f.URL+"/@ada/") {
		t.Fatalf("site set --yes: exit %d, %s%s", code, out, errOut)
	}
	if code, _, errOut := f.run(nil, "site", "set"); code != 2 {
		t.Fatalf("site set with nothing to change: exit %d, %s; want 2", code, errOut)
	}
}
