package images_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/services/images"
)

// TestEveryCommandAnswersHelpAndChangesNothing asks every command of the images and
// reaper binaries for help: each exits 0 with usage on stdout, and the configured SQLite
// file is never created (reap would create, migrate and reap it).
func TestEveryCommandAnswersHelpAndChangesNothing(t *testing.T) {
	for _, p := range []app.Program{images.Program, images.ReaperProgram} {
		var cases [][]string
		for _, h := range []string{"--help", "-h"} {
			cases = append(cases, []string{h}, []string{"serve", h}, []string{"migrate", h}, []string{"routes", h},
				[]string{"version", h}, []string{"reap", h}, []string{"reap", "--batch", "5", h})
		}
		if p.Default == "reap" {
			cases = append(cases, []string{"--batch", "5", "--help"})
		}
		for _, args := range cases {
			t.Run(p.Name+" "+strings.Join(args, " "), func(t *testing.T) {
				dbFile := filepath.Join(t.TempDir(), "sharenote.db")
				env := map[string]string{"SHARE_DATABASE_URL": "sqlite:" + dbFile, "SHARE_ADDR": "127.0.0.1:0", "SHARE_ADMIN_ADDR": "127.0.0.1:0"}
				var out, errOut bytes.Buffer
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				code := p.Main(ctx, app.Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errOut}, args)
				if code != 0 {
					t.Errorf("exit %d, want 0; stderr %q", code, errOut.String())
				}
				if !strings.Contains(out.String(), "usage: "+p.Name) {
					t.Errorf("stdout %q shows no usage", out.String())
				}
				if _, err := os.Stat(dbFile); !os.IsNotExist(err) {
					t.Errorf("the SQLite file exists (%v): the command ran", err)
				}
			})
		}
	}
}
