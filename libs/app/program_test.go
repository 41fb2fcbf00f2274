package app_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cli"
)

// helpEnv is an environment whose database would be created under a data directory
// that does not exist yet, and whose listeners take any free port, so that a command that
// ran instead of answering help would be seen (and not collide with another test).
func helpEnv(t *testing.T) (cli.Env, *strings.Builder, *strings.Builder, string) {
	dataDir := filepath.Join(t.TempDir(), "data")
	vars := map[string]string{"SHARE_DATA_DIR": dataDir, "SHARE_ADDR": "127.0.0.1:0", "SHARE_ADMIN_ADDR": "127.0.0.1:0"}
	var out, errOut strings.Builder
	return cli.Env{Getenv: func(k string) string { return vars[k] }, Stdout: &out, Stderr: &errOut}, &out, &errOut, dataDir
}

// TestHelpChangesNothing asks every command of a program for help, in every spelling the
// flag package knows and after other arguments: each answers usage and exit 0 without
// running, so neither the SQLite file nor its folder comes to exist.
func TestHelpChangesNothing(t *testing.T) {
	ran := false
	custom := cli.Command{Name: "custom", Summary: "a command that must not run for --help", Usage: "[--level N]",
		Flags: func(fs *flag.FlagSet) { fs.Int("level", 1, "how far to go") },
		Run:   func(context.Context, cli.Env, []string) error { ran = true; return nil }}
	p := app.Program{Name: "sharenote", Commands: []cli.Command{custom}}
	var cases [][]string
	for _, h := range []string{"--help", "-h", "-help", "--h"} {
		cases = append(cases, []string{h})
		for _, cmd := range []string{"serve", "migrate", "routes", "version", "custom"} {
			cases = append(cases, []string{cmd, h}, []string{cmd, "--unknown", "x", h})
		}
		cases = append(cases, []string{"config", h}, []string{"config", "print", h}, []string{"config", "verify", h})
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			env, out, errOut, dataDir := helpEnv(t)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if code := p.Main(ctx, env, args); code != 0 {
				t.Errorf("exit %d, want 0; stderr %q", code, errOut.String())
			}
			if !strings.Contains(out.String(), "usage: "+p.Name) {
				t.Errorf("stdout %q shows no usage", out.String())
			}
			if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
				t.Errorf("the data directory exists (%v): the command ran", err)
			}
			if ran {
				t.Error("the custom command ran")
			}
		})
	}
	t.Run("a command's help lists its flags", func(t *testing.T) {
		env, out, _, _ := helpEnv(t)
		if code := (app.Program{Name: "sharenote", Commands: []cli.Command{custom}}).Main(context.Background(), env, []string{"custom", "-h"}); code != 0 ||
			!strings.Contains(out.String(), "usage: sharenote custom [--level N]") || !strings.Contains(out.String(), "-level") {
			t.Errorf("exit %d, help %q", code, out.String())
		}
	})
	t.Run("help after -- is an argument", func(t *testing.T) {
		env, _, _, _ := helpEnv(t)
		if code := (app.Program{Name: "sharenote", Commands: []cli.Command{custom}}).Main(context.Background(), env, []string{"custom", "--", "--help"}); code != 0 || !ran {
			t.Errorf("exit %d, ran %v; want the command run with --help as its argument", code, ran)
		}
	})
}

func TestCommandsWithoutArgumentsRefuseThem(t *testing.T) {
	for _, cmd := range []string{"migrate", "routes", "version", "config print", "config verify"} {
		env, _, _, dataDir := helpEnv(t)
		if code := (app.Program{Name: "sharenote"}).Main(context.Background(), env, append(strings.Fields(cmd), "--dry-run")); code != 2 {
			t.Errorf("%s --dry-run: exit %d, want 2 (usage)", cmd, code)
		}
		if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
			t.Errorf("%s --dry-run created the data directory", cmd)
		}
	}
}
