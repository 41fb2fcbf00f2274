package sharenote_test

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/sharenote"
)

// serveTargets runs `sharenote serve --target list` in this process until the test ends
// and returns its public base URL once it is ready.
func serveTargets(t *testing.T, b testkit.Backend, list string) string {
	t.Helper()
	env := map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL, "SHARE_REDIS_URL": b.RedisURL, "SHARE_REDIS_KEY_PREFIX": b.RedisPrefix}
	maps.Copy(env, b.BlobEnv)
	return serve(t, env, list).base
}

// served is a `sharenote serve` running in this process: its public and admin base URLs
// and its log.
type served struct {
	base, admin string
	logs        *testkit.SyncBuffer
}

// serve runs `sharenote serve --target list` with the variables of env (and listeners of
// its own) until the test ends, and returns it once it is ready.
func serve(t *testing.T, env map[string]string, list string) served {
	t.Helper()
	s := served{base: testkit.FreeAddr(), admin: testkit.FreeAddr(), logs: &testkit.SyncBuffer{}}
	env = maps.Clone(env)
	maps.Copy(env, map[string]string{"SHARE_ADDR": s.base, "SHARE_ADMIN_ADDR": s.admin, "SHARE_DRAIN_DELAY": "0s"})
	s.base, s.admin = "http://"+s.base, "http://"+s.admin
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- sharenote.Program.Main(ctx, cli.Env{Getenv: func(k string) string { return env[k] }, Stdout: &bytes.Buffer{}, Stderr: s.logs},
			[]string{"serve", "--target", list})
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d: %s", code, s.logs)
		}
	})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if testkit.Responds(s.admin+"/readyz", http.StatusOK) {
			return s
		}
	}
	t.Fatalf("serve --target %s did not become ready: %s", list, s.logs)
	return served{}
}

// TestServeTargetServesItsRoutesOnly starts `serve --target` with one target and with
// two: a path with a route of a served target answers a method it lacks with 405 and the
// Allow header (it is mounted), every other path answers 404, whatever the method.
func TestServeTargetServesItsRoutesOnly(t *testing.T) {
	b := testkit.PostgresBackend(t)
	for _, list := range []string{routes.Notes, routes.Publish + "," + routes.OGRenderer} {
		t.Run(list, func(t *testing.T) {
			served, err := routes.ParseTargets(list)
			if err != nil {
				t.Fatal(err)
			}
			base := serveTargets(t, b, list)
			for _, r := range routes.Table {
				req, _ := http.NewRequest(http.MethodDelete, base+concrete(r.Path, unknownCUID), nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				mounted := slices.Contains(served, r.Target)
				if want := map[bool]int{true: http.StatusMethodNotAllowed, false: http.StatusNotFound}[mounted]; resp.StatusCode != want {
					t.Errorf("DELETE %s (a route of %s): %d, want %d", r.Path, r.Target, resp.StatusCode, want)
				}
				if mounted && !strings.Contains(resp.Header.Get("Allow"), r.Method) {
					t.Errorf("DELETE %s: Allow %q lacks %s", r.Path, resp.Header.Get("Allow"), r.Method)
				}
			}
		})
	}
}
