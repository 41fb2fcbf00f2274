package sharenote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/services/sharenote"
)

// dialLog replaces http.DefaultTransport, which the commands send through, for the test:
// it keeps the URL of every request and answers it with an error, so that nothing leaves
// the process whatever the command would have sent, and where to is seen.
type dialLog struct {
	mu   sync.Mutex
	urls []string
}

func (d *dialLog) RoundTrip(req *http.Request) (*http.Response, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.urls = append(d.urls, req.URL.String())
	return nil, errors.New("the test sends nothing")
}

func (d *dialLog) sent() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.urls...)
}

func logDials(t *testing.T) *dialLog {
	d := &dialLog{}
	saved := http.DefaultTransport
	http.DefaultTransport = d
	t.Cleanup(func() { http.DefaultTransport = saved })
	return d
}

// runEnv runs the program with exactly env and returns its exit status and output.
func runEnv(env map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	getenv := func(k string) string { return env[k] }
	code = sharenote.Program.Main(context.Background(), cli.Env{Getenv: getenv, Stdout: &out, Stderr: &errOut}, args)
	return code, out.String(), errOut.String()
}

// licenseEnv is a client environment with a license and a config folder of the test's
// own, and no server.
func licenseEnv(t *testing.T) map[string]string {
	return map[string]string{
		"XDG_CONFIG_HOME":   t.TempDir(),
		"SHARE_LICENSE_KEY": "snk_secret_license",
		"SHARE_INSTANCE_ID": "sni_instance",
	}
}

// TestNoServerConfiguredIsAClearErrorNotADefault is the finding that, with no server
// configured, login posted the license in plain HTTP to 127.0.0.1:8080, to whatever
// listened there: a command needs --server, SHARE_SERVER or an earlier login.
func TestNoServerConfiguredIsAClearErrorNotADefault(t *testing.T) {
	for _, args := range [][]string{{"login"}, {"list"}, {"settings"}, {"unshare", "k3v9x2m0q8w1e7r4t6y5u2i0"}} {
		dials := logDials(t)
		code, out, errOut := runEnv(licenseEnv(t), args...)
		if got := dials.sent(); len(got) != 0 {
			t.Errorf("%q with no server sent %q", args, got)
		}
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 ||
			!strings.Contains(errOut, "SHARE_SERVER") || !strings.Contains(errOut, "--server") {
			t.Errorf("%q with no server: exit %d, stdout %q, stderr %q; want 2 and one line saying how to set it", args, code, out, errOut)
		}
	}
}

// TestPlainHTTPOnlyToLoopback: a server URL of plain http:// names a loopback address, or
// it is refused before anything is dialed; https:// may name any host.
func TestPlainHTTPOnlyToLoopback(t *testing.T) {
	refused := []string{
		"http://share.example.com", "http://192.0.2.1:8080", "http://10.0.0.1", "http://[2001:db8::1]:8080",
		"http://127.0.0.1.example.com", "http://localhost.example.com", "HTTP://share.example.com",
		"share.example.com", "ftp://127.0.0.1", "http://", "https://",
	}
	allowed := []string{
		"https://share.example.com", "https://192.0.2.1:8443", "http://127.0.0.1:8080", "http://127.1.2.3:9",
		"http://[::1]:8080", "http://localhost:8080", "http://LOCALHOST:8080", "http://127.0.0.1:8080/",
	}
	for _, srv := range refused {
		for _, how := range []string{"--server", "SHARE_SERVER"} {
			dials := logDials(t)
			env := licenseEnv(t)
			args := []string{"login"}
			if how == "--server" {
				args = append(args, "--server", srv)
			} else {
				env["SHARE_SERVER"] = srv
			}
			code, _, errOut := runEnv(env, args...)
			if got := dials.sent(); len(got) != 0 {
				t.Errorf("login with %s %s sent %q", how, srv, got)
			}
			if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "server") {
				t.Errorf("login with %s %s: exit %d, stderr %q; want 2 and why", how, srv, code, errOut)
			}
		}
	}
	for _, srv := range allowed {
		dials := logDials(t)
		code, _, errOut := runEnv(licenseEnv(t), "login", "--server", srv)
		want := strings.ToLower(strings.TrimSuffix(srv, "/")) + "/api/auth/publish"
		if got := dials.sent(); len(got) != 1 || strings.ToLower(got[0]) != want {
			t.Errorf("login --server %s sent %q, want one request to %s", srv, got, want)
		}
		if code != 1 || !strings.Contains(errOut, "the test sends nothing") {
			t.Errorf("login --server %s: exit %d, stderr %q; want the transport's error", srv, code, errOut)
		}
	}

	// The server of an earlier login obeys the same rule (a file written by an older
	// client, or by hand).
	dials := logDials(t)
	env := licenseEnv(t)
	dir := filepath.Join(env["XDG_CONFIG_HOME"], "sharenote")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	creds := `{"default": "http://share.example.com", "servers": {}}`
	if err := os.WriteFile(filepath.Join(dir, "credentials.json"), []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runEnv(env, "list")
	if got := dials.sent(); len(got) != 0 || code != 2 || !strings.Contains(errOut, "http://share.example.com") {
		t.Errorf("a saved plain-http server: exit %d, stderr %q, sent %q; want 2 and nothing sent", code, errOut, got)
	}
}

// TestCommandsDoNotFollowARedirectToAnotherOrigin: login's license key and a cached
// token stay with the server they were meant for when it answers 307 to another port.
func TestCommandsDoNotFollowARedirectToAnotherOrigin(t *testing.T) {
	var mu sync.Mutex
	var got []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(body))
		mu.Unlock()
	}))
	t.Cleanup(elsewhere.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)

	env := licenseEnv(t)
	env["SHARE_SERVER"] = redirector.URL
	code, _, errOut := runEnv(env, "login")
	if code != 1 || !strings.Contains(errOut, "another origin") {
		t.Errorf("login: exit %d, stderr %q; want 1 and the refused redirect", code, errOut)
	}
	// A cached session, and no license to renew it with.
	delete(env, "SHARE_LICENSE_KEY")
	dir := filepath.Join(env["XDG_CONFIG_HOME"], "sharenote")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	creds := fmt.Sprintf(`{"default": %q, "servers": {%[1]q: {"token": "secret-token", "expires_at": %q}}}`,
		redirector.URL, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(dir, "credentials.json"), []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runEnv(env, "list")
	if code != 1 || !strings.Contains(errOut, "another origin") {
		t.Errorf("list: exit %d, stderr %q; want 1 and the refused redirect", code, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Errorf("the other origin received %q", got)
	}
}
