package assets_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/services/notes/internal/assets"
)

// TestEmbeddedMermaidIsThePinnedBuild checks the embedded script against the sha256 that
// build/fetch-mermaid.sh checks the npm package's dist/mermaid.min.js against, and its
// version against VERSION, so that no edit or other download slips in unnoticed.
func TestEmbeddedMermaidIsThePinnedBuild(t *testing.T) {
	pin, err := os.ReadFile("mermaid/mermaid.min.js.sha256")
	if err != nil {
		t.Fatal(err)
	}
	want, name, _ := strings.Cut(strings.TrimSpace(string(pin)), "  ")
	sum := sha256.Sum256(assets.Embedded)
	if got := hex.EncodeToString(sum[:]); got != want || name != "mermaid.min.js" {
		t.Errorf("embedded mermaid.min.js has sha256 %s, pinned %s (%s): run make mermaid", got, want, name)
	}
	if !bytes.Contains(assets.Embedded, []byte(`version:"`+assets.MermaidVersion+`"`)) {
		t.Errorf("the embedded build does not call itself version %s", assets.MermaidVersion)
	}
	licence, err := os.ReadFile("mermaid/LICENSE")
	if err != nil || !bytes.HasPrefix(licence, []byte("The MIT License")) {
		t.Errorf("mermaid/LICENSE is not Mermaid's MIT licence (%v)", err)
	}
}

// TestDiagramScriptsAreVersioned checks that each script's path names its content, which
// is what makes the year-long immutable caching safe.
func TestDiagramScriptsAreVersioned(t *testing.T) {
	want := []string{"/assets/mermaid-" + assets.MermaidVersion + ".min.js", "/assets/diagrams-"}
	if len(assets.DiagramScripts) != 2 || assets.DiagramScripts[0] != want[0] || !strings.HasPrefix(assets.DiagramScripts[1], want[1]) ||
		len(assets.DiagramScripts[1]) != len("/assets/diagrams-.js")+12 {
		t.Errorf("DiagramScripts = %q", assets.DiagramScripts)
	}
}
