package sharenote_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/routes"
)

const modulePath = "github.com/sharenote/sharenote/"

// TestImportsFollowTheLayers checks the direction of imports that docs/architecture.md
// draws, over every package of the module (tests excluded): libs never imports services;
// a target imports no other target; only the program imports the targets; nothing that
// ships imports the test kits (libs/testkit, and libs/note/notetest, the store ports' contract).
func TestImportsFollowTheLayers(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	targetPkgs := map[string]bool{}
	for _, target := range routes.Targets {
		targetPkgs[modulePath+"services/"+strings.ReplaceAll(target, "-", "")] = true
	}
	// owner returns the target package pkg belongs to ("" for none).
	owner := func(pkg string) string {
		for t := range targetPkgs {
			if pkg == t || strings.HasPrefix(pkg, t+"/") {
				return t
			}
		}
		return ""
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		for _, imp := range imports {
			if !strings.HasPrefix(imp, modulePath) {
				continue
			}
			switch {
			case strings.HasPrefix(pkg, modulePath+"libs/") && strings.HasPrefix(imp, modulePath+"services/"):
				t.Errorf("%s imports %s: libs never imports services", pkg, imp)
			case owner(imp) != "" && owner(pkg) != "" && owner(imp) != owner(pkg):
				t.Errorf("%s imports %s: a target imports no other target", pkg, imp)
			case targetPkgs[imp] && owner(pkg) == "" && pkg != modulePath+"services/sharenote":
				t.Errorf("%s imports the target %s: only services/sharenote does", pkg, imp)
			case strings.HasPrefix(imp, modulePath+"libs/testkit") && !strings.HasPrefix(pkg, modulePath+"libs/testkit"):
				t.Errorf("%s imports %s: the test kit is for tests only", pkg, imp)
			case imp == modulePath+"libs/note/notetest":
				t.Errorf("%s imports %s: the store ports' contract is for tests only", pkg, imp)
			}
		}
	}
	if !slices.ContainsFunc(strings.Fields(string(out)), func(s string) bool { return targetPkgs[s] }) {
		t.Fatal("go list found none of the target packages")
	}
}
