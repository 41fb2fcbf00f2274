package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/config"
)

// Server is a process serving targets on random loopback ports, exactly as `serve` runs
// them: the same app.New, router, middleware and listeners.
type Server struct {
	URL      string
	AdminURL string
	App      *app.App
	// Backend is what the server keeps its data in: OpenDB and OpenBlobs open it beside
	// the server, for a test that looks at what was stored.
	Backend  Backend
	Logs     *SyncBuffer
	Clock    *Clock
	shutdown func() error
}

// Option adjusts StartServer.
type Option func(*options)

type options struct {
	env   map[string]string
	clock *Clock
	logs  io.Writer
	// public wraps the public listener; nil: none.
	public func(net.Listener) net.Listener
}

// WithEnv sets a configuration variable for the server.
func WithEnv(name, value string) Option { return func(o *options) { o.env[name] = value } }

// WithLogs sends the server's log lines to w instead of Server.Logs (a benchmark's
// /dev/null: a buffer that grows by every line would measure itself).
func WithLogs(w io.Writer) Option { return func(o *options) { o.logs = w } }

// WithListener makes the server serve the public routes on wrap(listener), so that a
// test can see what the whole stack writes to a connection, and from where.
func WithListener(wrap func(net.Listener) net.Listener) Option {
	return func(o *options) { o.public = wrap }
}

// WithClock makes the server read time from c.
func WithClock(c *Clock) Option { return func(o *options) { o.clock = c } }

// StartServer serves targets on backend b until the test ends.
func StartServer(t *testing.T, b Backend, targets []app.Target, opts ...Option) *Server {
	t.Helper()
	o := collectOptions(opts)
	public, admin := listenLoopback(t), listenLoopback(t)
	s := &Server{URL: "http://" + public.Addr().String(), AdminURL: "http://" + admin.Addr().String(), Backend: b, Logs: &SyncBuffer{}, Clock: o.clock}
	getenv := s.env(t, b, public, admin, o.env)
	cfg, err := config.Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var logs io.Writer = s.Logs
	if o.logs != nil {
		logs = o.logs
	}
	s.App, err = app.New(ctx, cfg, app.Options{Process: "test", Targets: targets, Getenv: getenv, Logs: logs, Now: o.clock.Now})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if o.public != nil {
		public = o.public(public)
	}
	s.serve(ctx, cancel, t, public, admin)
	return s
}

// collectOptions applies opts over the defaults: no variables of their own and a new
// Clock.
func collectOptions(opts []Option) options {
	o := options{env: map[string]string{}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.clock == nil {
		o.clock = NewClock()
	}
	return o
}

// listenLoopback listens on a random loopback port.
func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// env returns the server's configuration: its listeners' addresses, backend b and a data
// directory of the test's, with the variables set by WithEnv (set) on top.
func (s *Server) env(t *testing.T, b Backend, public, admin net.Listener, set map[string]string) func(string) string {
	env := map[string]string{
		"SHARE_ADDR":             public.Addr().String(),
		"SHARE_ADMIN_ADDR":       admin.Addr().String(),
		"SHARE_PUBLIC_URL":       s.URL,
		"SHARE_DATA_DIR":         t.TempDir(),
		"SHARE_DATABASE_URL":     b.DatabaseURL,
		"SHARE_REDIS_URL":        b.RedisURL,
		"SHARE_REDIS_KEY_PREFIX": b.RedisPrefix,
		"SHARE_SHUTDOWN_TIMEOUT": "10s",
		// Tests have no load balancer to drain: stop at once.
		"SHARE_DRAIN_DELAY": "0s",
	}
	maps.Copy(env, b.BlobEnv)
	maps.Copy(env, set)
	return func(k string) string { return env[k] }
}

// serve runs s.App on the listeners until Shutdown or the end of the test (cancel ends
// ctx, which stops it), and closes the app when the test ends.
func (s *Server) serve(ctx context.Context, cancel context.CancelFunc, t *testing.T, public, admin net.Listener) {
	done := make(chan error, 1)
	go func() { done <- s.App.Serve(ctx, public, admin) }()
	s.shutdown = sync.OnceValue(func() error {
		// A connection the client dialled but never used is "new" to the server, and
		// Shutdown waits up to 5 s before it counts as idle: close such connections first.
		client.CloseIdleConnections()
		cancel()
		return <-done
	})
	t.Cleanup(func() {
		if err := s.shutdown(); err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := s.App.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// Shutdown stops serving as SIGTERM does (drain delay, then the listeners close and
// requests in flight finish) and returns what Serve returned; the stores stay open
// until the test ends.
func (s *Server) Shutdown() error { return s.shutdown() }

// Request is one HTTP request to a Server.
type Request struct {
	Method string
	Path   string
	// JSON, when set, is marshalled as the body with Content-Type: application/json.
	JSON        any
	Body        []byte
	ContentType string
	Token       string
	Header      map[string]string
}

// Response is a fully read response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

var client = &http.Client{Timeout: 30 * time.Second}

// Do sends r and reads the whole response.
func (s *Server) Do(t testing.TB, r Request) *Response {
	t.Helper()
	body := r.Body
	if r.JSON != nil {
		var err error
		if body, err = json.Marshal(r.JSON); err != nil {
			t.Fatal(err)
		}
		if r.ContentType == "" {
			r.ContentType = "application/json"
		}
	}
	req, err := http.NewRequest(r.Method, s.URL+r.Path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	// Every response of the HTTP suites must be one the OpenAPI document allows.
	ValidateResponse(t, req, resp.StatusCode, resp.Header, b)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Admin sends a GET to the admin listener.
func (s *Server) Admin(t testing.TB, path string) *Response {
	t.Helper()
	resp, err := client.Get(s.AdminURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Decode unmarshals the body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %d response %q: %v", r.Status, r.Body, err)
	}
}

var maxAge = regexp.MustCompile(`^public, max-age=(\d+)$`)

// MaxAge fails the test unless the response has Cache-Control: public, max-age=N, and
// returns N seconds.
func (r *Response) MaxAge(t testing.TB) time.Duration {
	t.Helper()
	m := maxAge.FindStringSubmatch(r.Header.Get("Cache-Control"))
	if m == nil {
		t.Fatalf("Cache-Control = %q, want public, max-age=N", r.Header.Get("Cache-Control"))
	}
	n, _ := strconv.Atoi(m[1])
	return time.Duration(n) * time.Second
}

// Expect fails the test unless the response has the status and, for an error, the code.
// It returns the response for chaining.
func (r *Response) Expect(t testing.TB, status int, code string) *Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	if code != "" {
		var body struct{ Error, Message string }
		r.Decode(t, &body)
		if body.Error != code || body.Message == "" {
			t.Fatalf("error = %q (message %q), want %q with a message", body.Error, body.Message, code)
		}
	}
	return r
}

// Account is a sharing account with a live session token.
type Account struct {
	account.Credentials
	Token string
}

// NewAccount creates a license through the domain (as the operator command does) and
// logs in, without spending the per-IP authentication limit.
func (s *Server) NewAccount(t testing.TB, name string) Account {
	t.Helper()
	ctx := context.Background()
	creds, err := s.App.Deps().Accounts.CreateLicense(ctx, name, name+"@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.App.Deps().Accounts.Authenticate(ctx, creds.LicenseKey, creds.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	return Account{Credentials: creds, Token: tok.Token}
}

// Run runs a command of program (its built-in ones included) as an operator would,
// against backend b's database and object store, with env's variables on top, and returns
// its exit status and what it printed.
func Run(t *testing.T, b Backend, program app.Program, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	vars := map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL}
	maps.Copy(vars, b.BlobEnv)
	maps.Copy(vars, env)
	var out, errOut bytes.Buffer
	code = program.Main(context.Background(), cli.Env{Getenv: func(k string) string { return vars[k] }, Stdout: &out, Stderr: &errOut}, args)
	return code, out.String(), errOut.String()
}

// Arranger is a target of tests alone that serves nothing and needs what the note
// domain's Publisher needs. A test of one target adds it to the targets it starts, so that
// App.Deps().Publisher() arranges notes in that process as a publish target beside it
// would; the tested target is still built from its own Needs alone.
var Arranger = app.Target{Name: "test-arranger",
	Needs: app.Needs{Database: app.ReadWrite, ObjectStore: true, Renderer: true},
	New:   func(app.Deps) (app.Parts, error) { return app.Parts{}, nil }}
