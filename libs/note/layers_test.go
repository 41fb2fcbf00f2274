package note_test

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sharenote/sharenote/"

// TestTheDomainKnowsNothingOfHTTP checks the direction of the layers (errors are
// translated once, at the edge: docs/architecture.md "A request, from the ingress to the
// database"): the domain packages, and every package of the module they import, import no
// HTTP machinery and no package of the edge, so that their errors stay domain errors that
// errs translates in one place, and no status or code is decided below the edge. Tests
// are not counted.
func TestTheDomainKnowsNothingOfHTTP(t *testing.T) {
	// forbidden reports why the domain may not import imp ("" when it may).
	forbidden := func(imp string) string {
		switch {
		case imp == "net/http" || strings.HasPrefix(imp, "net/http/"):
			return "net/http is the edge's"
		case strings.HasPrefix(imp, "github.com/gin-gonic/"):
			return "gin is the edge's"
		case slices.Contains([]string{module + "libs/errs", module + "libs/httpx", module + "libs/noteapi", module + "libs/authn"}, imp):
			return "it is a package of the HTTP edge"
		case strings.HasPrefix(imp, module+"services/"):
			return "libs never imports services"
		}
		return ""
	}
	// wire lists, per domain package, what it may not import although its dependencies
	// may: account's settings arrive decoded by the edge, as typed values.
	wire := map[string][]string{module + "libs/account": {"encoding/json"}}

	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	queue := []string{module + "libs/note", module + "libs/account"}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if seen[pkg] {
			continue
		}
		seen[pkg] = true
		bp, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(pkg, module))), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range bp.Imports {
			if why := forbidden(imp); why != "" {
				t.Errorf("%s imports %s: %s", pkg, imp, why)
				continue
			}
			if slices.Contains(wire[pkg], imp) {
				t.Errorf("%s imports %s: requests are decoded at the edge", pkg, imp)
			}
			if strings.HasPrefix(imp, module) {
				queue = append(queue, imp)
			}
		}
	}
	if !seen[module+"libs/account"] || len(seen) < 3 {
		t.Fatalf("walked only %v", seen)
	}
}
