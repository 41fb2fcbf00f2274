package sharenote_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/sharenote"
)

// main runs the program with a SQLite file under a fresh folder and listeners on any free
// port, and returns the exit status, stdout, stderr and the SQLite file's path.
func main(t *testing.T, args ...string) (code int, stdout, stderr string, dbFile string) {
	t.Helper()
	dbFile = filepath.Join(t.TempDir(), "sharenote.db")
	env := map[string]string{"SHARE_DATABASE_URL": "sqlite:" + dbFile, "SHARE_ADDR": "127.0.0.1:0", "SHARE_ADMIN_ADDR": "127.0.0.1:0"}
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	code = sharenote.Program.Main(ctx, cli.Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errOut}, args)
	return code, out.String(), errOut.String(), dbFile
}

// TestEveryCommandAnswersHelpAndChangesNothing asks every command of the binary, and
// every licenses and config subcommand, for help: each exits 0 with usage on stdout, and the
// configured SQLite file is never created (serve, migrate, licenses and reap would).
func TestEveryCommandAnswersHelpAndChangesNothing(t *testing.T) {
	var cases [][]string
	for _, h := range []string{"--help", "-h"} {
		cases = append(cases, []string{h}, []string{"serve", h}, []string{"serve", "--target", "notes", h},
			[]string{"migrate", h}, []string{"routes", h}, []string{"version", h},
			[]string{"reap", h}, []string{"reap", "--batch", "5", h}, []string{"sites", h},
			[]string{"config", h}, []string{"config", "print", h}, []string{"config", "verify", h},
			[]string{"licenses", h},
			[]string{"licenses", "create", h},
			[]string{"licenses", "create", "--name", "A", "--email", "a@example.com", h},
			[]string{"licenses", "create", "--license", "snk_x", h},
			[]string{"licenses", "add-instance", "--license", "snk_x", h},
			[]string{"licenses", "deactivate", "--license", "snk_x", h},
		)
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut, dbFile := main(t, args...)
			if code != 0 {
				t.Errorf("exit %d, want 0; stderr %q", code, errOut)
			}
			if !strings.Contains(out, "usage: sharenote") {
				t.Errorf("stdout %q shows no usage", out)
			}
			if _, err := os.Stat(dbFile); !os.IsNotExist(err) {
				t.Errorf("the SQLite file exists (%v): the command ran", err)
			}
		})
	}
}

func TestHelpListsFormsAndFlags(t *testing.T) {
	for cmd, wants := range map[string][]string{
		"licenses": {"sharenote licenses create --name NAME --email EMAIL", "sharenote licenses deactivate --license KEY", "-instance", "-email"},
		"serve":    {"sharenote serve [--target LIST]", "-target", strings.Join(routes.Targets, ", ")},
	} {
		code, out, _, _ := main(t, cmd, "--help")
		for _, want := range wants {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("%s: exit %d, help %q lacks %q", cmd, code, out, want)
			}
		}
	}
}

// The program's help lists the authors' commands, then the operators', each with a
// summary of one short line; the rest of what a command does is in its own help.
func TestHelpGroupsTheCommandsForAuthorsThenOperators(t *testing.T) {
	code, out, _, _ := main(t, "--help")
	authors, operators, found := strings.Cut(out, cli.Sections[1])
	if code != 0 || !found || !strings.Contains(authors, cli.Sections[0]) {
		t.Fatalf("exit %d, help without its two sections:\n%s", code, out)
	}
	for _, name := range []string{"login", "publish", "list", "versions", "unshare", "settings", "completion"} {
		if !strings.Contains(authors, "\n  "+name+" ") || strings.Contains(operators, "\n  "+name+" ") {
			t.Errorf("%s is not among the authors' commands:\n%s", name, out)
		}
	}
	for _, name := range []string{"serve", "migrate", "licenses", "reap", "routes", "config"} {
		if !strings.Contains(operators, "\n  "+name+" ") {
			t.Errorf("%s is not among the operators' commands:\n%s", name, out)
		}
	}
	for line := range strings.Lines(out) {
		if n := len([]rune(strings.TrimRight(line, "\n"))); n > 80 {
			t.Errorf("a line of %d characters: %q", n, line)
		}
	}
}

func TestServeRefusesAnUnknownTarget(t *testing.T) {
	for _, args := range [][]string{{"serve", "--target", "note"}, {"serve", "--target", ""}, {"serve", "extra"}} {
		code, _, errOut, dbFile := main(t, args...)
		if code == 0 || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q; want a failure that says why", args, code, errOut)
		}
		if _, err := os.Stat(dbFile); !os.IsNotExist(err) {
			t.Errorf("%q created the SQLite file", args)
		}
	}
}

func TestProgramHasOneTargetPerNameOfTheRoutesTable(t *testing.T) {
	var names []string
	for _, target := range sharenote.Program.Targets {
		names = append(names, target.Name)
	}
	if !slices.Equal(names, routes.Targets) {
		t.Errorf("targets %v, want one per name of routes.Targets %v, in its order", names, routes.Targets)
	}
}
