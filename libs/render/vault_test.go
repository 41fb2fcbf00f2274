package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/render"
)

// Every link with a fragment in a real vault (Obsidian's help, in .tools/vaults when it
// was fetched) leads to a heading or block of the note it names, as in Obsidian.
func TestAVaultsFragmentsResolve(t *testing.T) {
	root := filepath.Join("..", "..", ".tools", "vaults", "obsidian-help")
	if _, err := os.Stat(root); err != nil {
		t.Skip("no vault at", root)
	}
	outlines := map[string]render.Outline{}
	refs := map[string][]render.Reference{}
	err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		name := strings.TrimSuffix(filepath.Base(p), ".md")
		outlines[name], refs[name] = markdown(t, string(b)).Outline, render.References(string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	resolved := 0
	for name, rs := range refs {
		for _, r := range rs {
			target := r.Target
			if target == "" {
				target = name
			}
			o, ok := outlines[target]
			if r.Fragment == "" || !ok || r.Kind != render.RefWikilink && r.Kind != render.RefEmbed {
				continue
			}
			if _, ok := o.Anchor(r.Fragment); !ok {
				t.Errorf("%s: [[%s#%s]] leads nowhere", name, r.Target, r.Fragment)
			}
			resolved++
		}
	}
	if resolved < 100 {
		t.Errorf("only %d links with a fragment", resolved)
	}
}
