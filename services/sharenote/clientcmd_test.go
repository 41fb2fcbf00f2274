package sharenote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/wire"
	"github.com/sharenote/sharenote/services/sharenote"
)

// fixture is the whole program serving on a backend, a license of its own, and an
// environment for the client commands with a config folder of the test's own.
type fixture struct {
	*testkit.Server
	t    *testing.T
	acc  testkit.Account
	env  map[string]string
	conf string
}

func newFixture(t *testing.T, b testkit.Backend) *fixture {
	s := start(t, b)
	acc := s.NewAccount(t, "owner")
	conf := t.TempDir()
	return &fixture{Server: s, t: t, acc: acc, conf: conf, env: map[string]string{
		"XDG_CONFIG_HOME":   conf,
		"SHARE_SERVER":      s.URL,
		"SHARE_LICENSE_KEY": acc.LicenseKey,
		"SHARE_INSTANCE_ID": acc.InstanceID,
	}}
}

// run runs the program with the fixture's environment, less the variables named in
// without, and returns its exit status and output.
func (f *fixture) run(without []string, args ...string) (code int, stdout, stderr string) {
	f.t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(k string) string {
		for _, w := range without {
			if k == w {
				return ""
			}
		}
		return f.env[k]
	}
	code = sharenote.Program.Main(context.Background(), cli.Env{Getenv: getenv, Stdout: &out, Stderr: &errOut}, args)
	return code, out.String(), errOut.String()
}

// noLicense leaves the license out of the environment: commands use the cached token.
var noLicense = []string{"SHARE_LICENSE_KEY", "SHARE_INSTANCE_ID"}

func (f *fixture) publish(title string) string {
	f.t.Helper()
	p, err := testkit.Must(f.App.Deps().Publisher()).Publish(context.Background(), f.acc.UserCUID, note.Draft{Content: "# " + title, Title: &title, ShowProperties: true})
	if err != nil {
		f.t.Fatal(err)
	}
	return p.CUID
}

// validate fails unless each line of out is a 200 answer to method path that the OpenAPI
// document allows. The commands print the body: the headers are the ones the API sends
// with it (a publication's ETag after a publish or update).
func validate(t *testing.T, method, path, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, line := range lines {
		testkit.ValidateResponse(t, httptest.NewRequest(method, path, nil), http.StatusOK,
			http.Header{"Content-Type": {"application/json"}, "Etag": {`"etag"`}}, []byte(line))
	}
}

func (f *fixture) credentialsFile() string {
	return filepath.Join(f.conf, "sharenote", "credentials.json")
}

func TestLoginKeepsOnlyTheTokenOwnerReadable(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		code, out, errOut := f.run(nil, "login", "--json")
		if code != 0 {
			t.Fatalf("login: exit %d, stderr %q", code, errOut)
		}
		var shown map[string]any
		if err := json.Unmarshal([]byte(out), &shown); err != nil || shown["user_cuid"] != f.acc.UserCUID || shown["token"] != nil {
			t.Errorf("login --json = %q (%v): want the token response without the token", out, err)
		}
		st, err := os.Stat(f.credentialsFile())
		if err != nil {
			t.Fatal(err)
		}
		dir, err := os.Stat(filepath.Dir(f.credentialsFile()))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 {
			t.Errorf("token file mode %v in a folder of mode %v, want 0600 in 0700", st.Mode().Perm(), dir.Mode().Perm())
		}
		raw, err := os.ReadFile(f.credentialsFile())
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(f.acc.LicenseKey)) || bytes.Contains(raw, []byte(f.acc.InstanceID)) {
			t.Errorf("the token file holds the license: %s", raw)
		}
		// The cached token works without the license in the environment.
		if code, _, errOut := f.run(noLicense, "settings"); code != 0 {
			t.Errorf("settings with the cached token: exit %d, stderr %q", code, errOut)
		}
	})
}

func TestExpiredSessionIsRenewedOnlyFromTheEnvironment(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	if code, _, errOut := f.run(nil, "login"); code != 0 {
		t.Fatalf("login: exit %d, stderr %q", code, errOut)
	}
	expire := func() {
		raw, err := os.ReadFile(f.credentialsFile())
		if err != nil {
			t.Fatal(err)
		}
		var creds struct {
			Default string                 `json:"default"`
			Servers map[string]*wire.Token `json:"servers"`
		}
		if err := json.Unmarshal(raw, &creds); err != nil {
			t.Fatal(err)
		}
		creds.Servers[f.URL].ExpiresAt = wire.Time{Time: time.Now().Add(-time.Minute)}
		raw, _ = json.Marshal(creds)
		if err := os.WriteFile(f.credentialsFile(), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	expire()
	code, out, errOut := f.run(noLicense, "list")
	if code != 1 || out != "" || !strings.Contains(errOut, "run `sharenote login`") {
		t.Errorf("expired, no license: exit %d, stdout %q, stderr %q; want 1 and a hint to log in", code, out, errOut)
	}
	if code, _, errOut := f.run(nil, "list"); code != 0 {
		t.Errorf("expired, license in the environment: exit %d, stderr %q; want a renewed session", code, errOut)
	}
	if code, _, errOut := f.run(noLicense, "list"); code != 0 {
		t.Errorf("after the renewal: exit %d, stderr %q", code, errOut)
	}
	f.env["XDG_CONFIG_HOME"] = t.TempDir()
	if code, _, errOut := f.run(noLicense, "list"); code != 1 || !strings.Contains(errOut, "not logged in") {
		t.Errorf("never logged in: exit %d, stderr %q", code, errOut)
	}
}

func TestCommandsPrintTheAPIsJSONAndLines(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		first, second := f.publish("First"), f.publish("Second")
		c := &client.Client{BaseURL: f.URL, Token: f.acc.Token}
		if _, err := c.Update(context.Background(), first, wire.NoteUpdate{Title: wire.Set("First, again")}, ""); err != nil {
			t.Fatal(err)
		}

		code, out, errOut := f.run(nil, "list", "--limit", "1", "--json")
		if code != 0 || strings.Count(out, "\n") != 2 {
			t.Fatalf("list --limit 1 --json: exit %d, stdout %q, stderr %q; want two pages", code, out, errOut)
		}
		validate(t, http.MethodGet, "/api/user/notes", out)
		code, out, _ = f.run(noLicense, "list")
		if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, second+"\tactive\t"+f.URL+"/s/"+second+"\tSecond\n") {
			t.Errorf("list: exit %d, stdout %q; want one line a note", code, out)
		}

		code, out, _ = f.run(noLicense, "versions", first, "--json")
		validate(t, http.MethodGet, "/api/notes/"+first+"/versions", out)
		if code != 0 || !strings.Contains(out, `"version":1`) {
			t.Errorf("versions --json: exit %d, stdout %q", code, out)
		}
		code, out, _ = f.run(noLicense, "versions", "--json", first, "1")
		validate(t, http.MethodGet, "/api/notes/"+first+"/versions/1", out)
		if code != 0 || !strings.Contains(out, `"title":"First"`) {
			t.Errorf("versions CUID 1 --json: exit %d, stdout %q", code, out)
		}
		if code, out, _ = f.run(noLicense, "versions", first, "1"); code != 0 || out != "# First" {
			t.Errorf("versions CUID 1: exit %d, stdout %q; want the Markdown", code, out)
		}

		code, out, _ = f.run(noLicense, "settings", "--json")
		validate(t, http.MethodGet, "/api/user/settings", out)
		if code != 0 {
			t.Errorf("settings --json: exit %d", code)
		}
		code, out, errOut = f.run(noLicense, "settings", "--set", "theme=dark", "--set", "show_author=false")
		if code != 0 || !strings.Contains(out, "theme=dark\n") || !strings.Contains(out, "show_author=false\n") {
			t.Errorf("settings --set: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		code, _, errOut = f.run(noLicense, "settings", "--set", "theme=plaid")
		if code != 1 || !strings.Contains(errOut, "invalid_field") {
			t.Errorf("settings --set theme=plaid: exit %d, stderr %q; want 1 with the API's error", code, errOut)
		}

		code, out, _ = f.run(noLicense, "unshare", second, "--json")
		validate(t, http.MethodPost, "/api/unshare", out)
		if code != 0 || !strings.Contains(out, `"status":"unpublished"`) {
			t.Errorf("unshare --json: exit %d, stdout %q", code, out)
		}
		code, out, errOut = f.run(noLicense, "unshare", second)
		if code != 1 || out != "" || !strings.Contains(errOut, "not_found") {
			t.Errorf("second unshare: exit %d, stdout %q, stderr %q; want 1 with the API's message", code, out, errOut)
		}
	})
}

func TestUsageErrorsExitTwo(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	for _, args := range [][]string{
		{"versions"}, {"versions", "a", "b", "c"}, {"versions", "a", "zero"}, {"unshare"},
		{"settings", "--set", "colour=red"}, {"settings", "--set", "indexable=maybe"}, {"settings", "--set", "theme"},
		{"list", "extra"}, {"list", "--bogus"}, {"login", "extra"}, {"publish"}, {"publish", "a.md", "b.md"}, {"completion"},
	} {
		if code, _, errOut := f.run(nil, args...); code != 2 || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and why", args, code, errOut)
		}
	}
	// A login without the license and without a terminal cannot prompt.
	if code, _, errOut := f.run(noLicense, "login"); code != 2 || !strings.Contains(errOut, "SHARE_LICENSE_KEY") {
		t.Errorf("login without a license: exit %d, stderr %q", code, errOut)
	}
}

func TestHelpShowsAnExample(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	for _, cmd := range []string{"login", "publish", "list", "versions", "unshare", "settings"} {
		code, out, _ := f.run(nil, cmd, "--help")
		if code != 0 || !strings.Contains(out, "usage: sharenote "+cmd) || !strings.Contains(out, "example:\n  ") ||
			!strings.Contains(out, "-json") || !strings.Contains(out, "-server") {
			t.Errorf("%s --help: exit %d, %q", cmd, code, out)
		}
	}
}

func TestCompletionListsEveryCommandAndItsFlags(t *testing.T) {
	f := newFixture(t, testkit.SQLiteBackend(t))
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, out, errOut := f.run(nil, "completion", shell)
		if code != 0 {
			t.Fatalf("completion %s: exit %d, stderr %q", shell, code, errOut)
		}
		for _, want := range []string{"serve", "login", "publish", "completion", "versions", "new", "limit", "set", "target"} {
			if !strings.Contains(out, want) {
				t.Errorf("completion %s lacks %q:\n%s", shell, want, out)
			}
		}
		if shell != "bash" {
			continue
		}
		if bash, err := exec.LookPath("bash"); err == nil {
			script := filepath.Join(t.TempDir(), "sharenote.bash")
			if err := os.WriteFile(script, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v\n%s", err, b)
			}
		}
	}
	if code, _, _ := f.run(nil, "completion", "tcsh"); code != 2 {
		t.Errorf("completion tcsh: exit %d, want 2", code)
	}
}
