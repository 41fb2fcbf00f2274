package obsidian_test

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/sharenote/sharenote/libs/testkit/obsidian"
)

// realVault loads the vault SHARE_REAL_VAULT names (build/fetch-vault.sh puts the Obsidian
// help vault in .tools/vaults/obsidian-help), or skips.
func realVault(t *testing.T) *obsidian.Vault {
	t.Helper()
	dir := os.Getenv("SHARE_REAL_VAULT")
	if dir == "" {
		t.Skip("SHARE_REAL_VAULT unset (build/fetch-vault.sh fetches the Obsidian help vault)")
	}
	v, err := obsidian.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The help vault is written by Obsidian's own team for Obsidian: its links are the ones
// Obsidian resolves, so the resolver must resolve all but the few its text shows as
// examples of links to notes that do not exist.
func TestRealVaultResolves(t *testing.T) {
	v := realVault(t)
	f := v.Figures()
	t.Logf("notes %d (published %d), other files %d", f.Notes, f.Published, f.Files)
	t.Logf("links %d, resolved by Obsidian %d (to notes %d; by rule %v), unresolved %d",
		f.Links, f.Resolved, f.ToNotes, f.ByRule, len(f.Unresolved))
	t.Logf("fragments %d, found %d; image embeds %d, found %d", f.Fragments, f.FragmentsFound, f.ImageEmbeds, f.ImagesResolved)
	for _, l := range f.Unresolved {
		t.Logf("unresolved: %s:%d %s", l.From, l.Line, l.Raw)
	}
	if f.Notes < 100 {
		t.Errorf("%d notes, want a vault of at least 100", f.Notes)
	}
	if len(f.Unresolved)*100 > f.Links {
		t.Errorf("%d of %d links unresolved: more than 1%%", len(f.Unresolved), f.Links)
	}
}

// TestRealVaultSample prints 50 links picked at random (seeded, so the same 50 each run)
// with the resolver's answers, for the check by hand recorded in docs/vault-check.md.
func TestRealVaultSample(t *testing.T) {
	v := realVault(t)
	links := v.Links()
	r := rand.New(rand.NewPCG(22, 2026))
	for i, k := range r.Perm(len(links))[:50] {
		l := links[k]
		t.Logf("| %d | %s:%d | `%s` | %s |", i+1, l.From, l.Line, l.Raw, answer(v, l))
	}
}

// answer is the resolver's answer for a link, as docs/vault-check.md shows it.
func answer(v *obsidian.Vault, l obsidian.Link) string {
	if !l.Resolved() {
		return "unresolved"
	}
	s := l.ResolvedPath + " (" + string(l.Rule) + ")"
	switch {
	case l.HeadingIndex >= 0:
		s += " heading “" + v.Note(l.ResolvedPath).Headings[l.HeadingIndex].Text + "”"
	case l.Block != "":
		s += " block ^" + l.Block
	case l.Fragment != "" && !l.Attachment:
		s += " fragment not found"
	}
	return s
}
