package sharenote_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit"
)

// repoRoot is the repository root, where go.work is.
const repoRoot = "../.."

// buildBinary builds bin/sharenote into a temporary directory the way the image builds
// it (static, GOWORK=off: the module alone, as in the Dockerfile), so that the test runs
// what ships, and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sharenote")
	cmd := exec.Command("go", "build", "-o", bin, "./services/sharenote/cmd/sharenote")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build sharenote: %v\n%s", err, out)
	}
	return bin
}

// binary runs the built program with exactly env (and PATH), as a user's shell would.
type binary struct {
	t    *testing.T
	path string
	env  map[string]string
}

func (b binary) command(env map[string]string, args ...string) *exec.Cmd {
	cmd := exec.Command(b.path, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// run runs the program with the binary's environment plus extra and returns its stdout;
// it fails the test unless the program exits 0.
func (b binary) run(extra map[string]string, args ...string) string {
	b.t.Helper()
	env := maps.Clone(b.env)
	maps.Copy(env, extra)
	cmd := b.command(env, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		b.t.Fatalf("sharenote %s: %v; stderr %q", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// TestTheBinaryPublishesAndUpdatesAgainstARealServer proves the client end to end: the
// built binary serves (the embedded default, and Postgres with Redis), and the same binary
// logs in, publishes a folder note with two images, updates it in place, lists, shows
// versions and settings, and unshares; every --json output is an answer the OpenAPI
// document allows.
func TestTheBinaryPublishesAndUpdatesAgainstARealServer(t *testing.T) {
	bin := buildBinary(t)
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		addr := testkit.FreeAddr()
		serverEnv := map[string]string{"SHARE_ADDR": addr, "SHARE_ADMIN_ADDR": testkit.FreeAddr(), "SHARE_DATA_DIR": t.TempDir()}
		if b.Name == "postgres" {
			serverEnv["SHARE_DATABASE_URL"], serverEnv["SHARE_REDIS_URL"], serverEnv["SHARE_REDIS_KEY_PREFIX"] = b.DatabaseURL, b.RedisURL, b.RedisPrefix
			maps.Copy(serverEnv, b.BlobEnv)
		}
		sn := binary{t: t, path: bin, env: serverEnv}
		var license struct {
			LicenseKey string `json:"license_key"`
			InstanceID string `json:"instance_id"`
		}
		if err := json.Unmarshal([]byte(sn.run(nil, "licenses", "create", "--name", "Ada", "--email", "ada@example.com")), &license); err != nil {
			t.Fatal(err)
		}
		serve := sn.command(serverEnv, "serve")
		var logs bytes.Buffer
		serve.Stderr = &logs
		if err := serve.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = serve.Process.Signal(syscall.SIGTERM)
			_ = serve.Wait()
		})
		url := "http://" + addr
		for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
			if resp, err := http.Get(url + "/api/none"); err == nil {
				resp.Body.Close()
				break
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("the server did not answer; its logs:\n%s", logs.String())
			}
		}

		conf := t.TempDir()
		user := binary{t: t, path: bin, env: map[string]string{"XDG_CONFIG_HOME": conf, "SHARE_SERVER": url}}
		user.run(map[string]string{"SHARE_LICENSE_KEY": license.LicenseKey, "SHARE_INSTANCE_ID": license.InstanceID}, "login")
		tokenFile := filepath.Join(conf, "sharenote", "credentials.json")
		st, err := os.Stat(tokenFile)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("token file: %v, %v; want mode 0600", st, err)
		}
		if raw, _ := os.ReadFile(tokenFile); bytes.Contains(raw, []byte(license.LicenseKey)) {
			t.Error("the token file holds the license key")
		}

		dir := t.TempDir()
		write(t, dir, map[string][]byte{"note.md": []byte(folderNote), "a.png": testkit.PNG(t), "sub/a.png": testkit.PNGOfSize(t, 2000)})
		file := filepath.Join(dir, "note.md")
		out := user.run(nil, "publish", "--json", file)
		validate(t, http.MethodPost, "/api/publish", out)
		var published struct{ Cuid, URL string }
		if err := json.Unmarshal([]byte(out), &published); err != nil {
			t.Fatal(err)
		}
		write(t, dir, map[string][]byte{"note.md": []byte(folderNote + "\nAn afterthought.\n")})
		if out := user.run(nil, "publish", file); out != "updated\t"+published.URL+"\tnote.md\n" {
			t.Errorf("second publish printed %q, want updated and the same URL", out)
		}

		out = user.run(nil, "list", "--json")
		validate(t, http.MethodGet, "/api/user/notes", out)
		if strings.Count(out, `"cuid":`) != 1 || !strings.Contains(out, published.Cuid) {
			t.Errorf("list --json = %q, want the one publication", out)
		}
		out = user.run(nil, "versions", "--json", published.Cuid)
		validate(t, http.MethodGet, "/api/notes/"+published.Cuid+"/versions", out)
		if strings.Count(out, `"version":`) != 1 {
			t.Errorf("versions --json = %q, want one version", out)
		}
		out = user.run(nil, "settings", "--json", "--set", "theme=dark")
		validate(t, http.MethodPatch, "/api/user/settings", out)
		out = user.run(nil, "unshare", "--json", published.Cuid)
		validate(t, http.MethodPost, "/api/unshare", out)
		if !strings.Contains(out, `"unpublished"`) {
			t.Errorf("unshare --json = %q", out)
		}
	})
}
