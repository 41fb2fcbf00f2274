package sharenote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/sharenote"
)

// TestNeedsTableIsTheCode keeps docs/architecture.md "What each target needs" and the
// targets' declared needs from drifting: the section holds the table `sharenote routes
// --needs` prints, verbatim.
func TestNeedsTableIsTheCode(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := sharenote.Program.Main(context.Background(), cli.Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errOut}, []string{"routes", "--needs"}); code != 0 {
		t.Fatalf("routes --needs exited %d: %s", code, errOut.String())
	}
	for _, target := range routes.Targets {
		if !strings.Contains(out.String(), "| `"+target+"` |") {
			t.Errorf("routes --needs has no row for %s:\n%s", target, out.String())
		}
	}
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(doc), "\n## What each target needs\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if !found || !strings.Contains(section, "\n"+out.String()+"\n") {
		t.Errorf("docs/architecture.md \"What each target needs\" lacks the table of `sharenote routes --needs`:\n%s", out.String())
	}
}

// started is what a process's "serving" log line says it opened and runs.
type started struct {
	Opened []string `json:"opened"`
	Jobs   []string `json:"jobs"`
}

// startLine decodes the "serving" line of a process's log.
func startLine(t *testing.T, s served) started {
	t.Helper()
	logs := s.logs.Await(t, "the serving line", func(l string) bool { return strings.Contains(l, `"msg":"serving"`) })
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var l struct {
			Msg string `json:"msg"`
			started
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "serving" {
			return l.started
		}
	}
	t.Fatalf("no serving line in the log:\n%s", s.logs)
	return started{}
}

// readyChecks returns the dependencies /readyz reports, and those sharenote_dependency_up
// has a sample of.
func readyChecks(t *testing.T, s served) (readyz, metric []string) {
	t.Helper()
	var body struct {
		Checks map[string]string `json:"checks"`
	}
	if err := json.Unmarshal(getOK(t, s.admin+"/readyz"), &body); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(getOK(t, s.admin+"/metrics")), "\n") {
		if dep, ok := strings.CutPrefix(line, `sharenote_dependency_up{dependency="`); ok {
			metric = append(metric, dep[:strings.IndexByte(dep, '"')])
		}
	}
	slices.Sort(metric)
	return slices.Sorted(maps.Keys(body.Checks)), metric
}

func getOK(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}

// TestTargetsOpenOnlyWhatTheyNeed runs single targets on Postgres with Redis: og-renderer
// without any object-store setting serves a preview and reports no object store; auth,
// given a file object store, opens neither it (its directory is never made) nor the
// renderer, and still logs in; publish, the control, opens both and runs its jobs.
func TestTargetsOpenOnlyWhatTheyNeed(t *testing.T) {
	b := testkit.PostgresBackend(t)
	all := testkit.StartServer(t, b, sharenote.Program.Targets)
	acc := all.NewAccount(t, "ada")
	p, err := testkit.Must(all.App.Deps().Publisher()).Publish(context.Background(), acc.UserCUID, note.Draft{Content: "# Hi", Title: new("Hi")})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL, "SHARE_REDIS_URL": b.RedisURL, "SHARE_REDIS_KEY_PREFIX": b.RedisPrefix}
	cases := []struct {
		target       string
		blobs        bool
		opened, jobs []string
		checks       []string
	}{
		{routes.OGRenderer, false, []string{"database", "redis", "change feed"}, nil, []string{"database", "redis"}},
		{routes.Auth, true, []string{"database", "redis"}, nil, []string{"database", "redis"}},
		{routes.Publish, true, []string{"database", "redis", "object store", "change feed", "renderer"},
			[]string{"render", "names"}, []string{"database", "object_store", "redis"}},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			dir := t.TempDir()
			env := maps.Clone(env)
			env["SHARE_DATA_DIR"] = dir // The default object store's home: file://<dir>/blobs.
			if c.blobs {
				env["SHARE_BLOB_URL"] = "file://" + filepath.Join(dir, "blobs")
			}
			s := serve(t, env, c.target)
			if got := startLine(t, s); !slices.Equal(got.Opened, c.opened) || !slices.Equal(got.Jobs, c.jobs) {
				t.Errorf("opened %q and runs %q, want %q and %q", got.Opened, got.Jobs, c.opened, c.jobs)
			}
			if readyz, metric := readyChecks(t, s); !slices.Equal(readyz, c.checks) || !slices.Equal(metric, c.checks) {
				t.Errorf("/readyz checks %q, sharenote_dependency_up %q, want %q", readyz, metric, c.checks)
			}
			if _, err := os.Stat(filepath.Join(dir, "blobs")); c.target != routes.Publish && !os.IsNotExist(err) {
				t.Errorf("the object store's directory was made (%v): the target opened it", err)
			}
			switch c.target {
			case routes.OGRenderer:
				if png := getOK(t, s.base+"/api/og/"+p.CUID+".png"); !bytes.HasPrefix(png, []byte("\x89PNG")) {
					t.Errorf("the preview is not a PNG: %q", png[:min(len(png), 16)])
				}
			case routes.Auth:
				body, _ := json.Marshal(acc.Credentials)
				resp, err := http.Post(s.base+"/api/auth/publish", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("login: %d", resp.StatusCode)
				}
			}
		})
	}
}

// TestReapEveryReapsUntilStopped: `reap --every` (compose's reaper service) reaps after
// each interval, a line for each, until it is stopped, and then exits 0.
func TestReapEveryReapsUntilStopped(t *testing.T) {
	b := testkit.SQLiteBackend(t)
	env := map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL}
	maps.Copy(env, b.BlobEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var out, errOut bytes.Buffer
	code := sharenote.Program.Main(ctx, cli.Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errOut},
		[]string{"reap", "--every", "100ms"})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if code != 0 || len(lines) < 3 || !strings.Contains(lines[len(lines)-1], `"images":0`) {
		t.Errorf("reap --every 100ms for 0.5 s: exit %d, printed %d lines %q: %s", code, len(lines), out.String(), errOut.String())
	}
}
