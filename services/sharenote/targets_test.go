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
	addr, admin := testkit.FreeAddr(), testkit.FreeAddr()
	env := map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL, "SHARE_REDIS_URL": b.RedisURL, "SHARE_REDIS_KEY_PREFIX": b.RedisPrefix,
		"SHARE_ADDR": addr, "SHARE_ADMIN_ADDR": admin, "SHARE_DRAIN_DELAY": "0s"}
	maps.Copy(env, b.BlobEnv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var logs bytes.Buffer
	go func() {
		done <- sharenote.Program.Main(ctx, cli.Env{Getenv: func(k string) string { return env[k] }, Stdout: &logs, Stderr: &testkit.SyncBuffer{}},
			[]string{"serve", "--target", list})
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if testkit.Responds("http://"+admin+"/readyz", http.StatusOK) {
			return "http://" + addr
		}
	}
	t.Fatalf("serve --target %s did not become ready", list)
	return ""
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
