package auth_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/services/auth"
)

// TestEveryCommandAnswersHelpAndChangesNothing asks every command of the auth binary,
// and every licenses subcommand, for help: each exits 0 with usage on stdout, and the
// configured SQLite file is never created.
func TestEveryCommandAnswersHelpAndChangesNothing(t *testing.T) {
	var cases [][]string
	for _, h := range []string{"--help", "-h"} {
		cases = append(cases, []string{h}, []string{"serve", h}, []string{"migrate", h}, []string{"routes", h}, []string{"version", h},
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
			dbFile := filepath.Join(t.TempDir(), "sharenote.db")
			env := map[string]string{"SHARE_DATABASE_URL": "sqlite:" + dbFile, "SHARE_ADDR": "127.0.0.1:0", "SHARE_ADMIN_ADDR": "127.0.0.1:0"}
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			code := auth.Program.Main(ctx, app.Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errOut}, args)
			if code != 0 {
				t.Errorf("exit %d, want 0; stderr %q", code, errOut.String())
			}
			if !strings.Contains(out.String(), "usage: auth") {
				t.Errorf("stdout %q shows no usage", out.String())
			}
			if _, err := os.Stat(dbFile); !os.IsNotExist(err) {
				t.Errorf("the SQLite file exists (%v): the command ran", err)
			}
		})
	}
}

func TestLicensesHelpListsItsFormsAndFlags(t *testing.T) {
	var out bytes.Buffer
	code := auth.Program.Main(context.Background(), app.Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &out}, []string{"licenses", "--help"})
	for _, want := range []string{"auth licenses create --name NAME --email EMAIL", "auth licenses deactivate --license KEY", "-instance", "-email"} {
		if code != 0 || !strings.Contains(out.String(), want) {
			t.Errorf("exit %d, help %q lacks %q", code, out.String(), want)
		}
	}
}
