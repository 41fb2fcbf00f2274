package app_test

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// notesTarget is the notes target with handlers that answer 501 Not Implemented,
// except those in handlers, and with jobs, needing what a target may need.
func notesTarget(handlers app.Handlers, jobs ...app.Job) app.Target {
	needs := app.Needs{Database: app.ReadWrite, Redis: true, ObjectStore: true, Renderer: true, ChangeFeed: true}
	for _, j := range jobs {
		needs.Jobs = append(needs.Jobs, j.Name)
	}
	return app.Target{Name: routes.Notes, Needs: needs, New: func(app.Deps) (app.Parts, error) {
		all := app.Handlers{}
		for _, r := range routes.ForTarget(routes.Notes) {
			all[r] = func(c *gin.Context) { c.Status(http.StatusNotImplemented) }
		}
		maps.Copy(all, handlers)
		return app.Parts{Handlers: all, Jobs: jobs}, nil
	}}
}

// panicking is the notes target whose public note read panics.
var panicking = notesTarget(app.Handlers{
	routes.NoteRead: func(*gin.Context) { panic("secret internal state: password=hunter2") },
})

func TestPanickingHandlerIs500WithNothingInternal(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := testkit.StartServer(t, b, []app.Target{panicking}, noDrain)
		resp := s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/abc"}).Expect(t, http.StatusInternalServerError, "internal_error")
		for _, leak := range []string{"hunter2", "panic", "goroutine", ".go:"} {
			if strings.Contains(string(resp.Body), leak) {
				t.Errorf("500 body %s leaks %q", resp.Body, leak)
			}
		}
		s.Logs.Await(t, "the panic and its stack", func(l string) bool {
			return strings.Contains(l, "hunter2") && strings.Contains(l, "goroutine")
		})
		// The server survives the panic.
		s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/abc"}).Expect(t, http.StatusInternalServerError, "internal_error")
	})
}

func TestEveryRouteOfATargetHasItsHandlerAndNoOther(t *testing.T) {
	b := testkit.SQLiteBackend(t)
	cfg, err := config.Load(func(k string) string { return map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL}[k] })
	if err != nil {
		t.Fatal(err)
	}
	missing := notesTarget(nil)
	inner := missing.New
	missing.New = func(d app.Deps) (app.Parts, error) {
		s, err := inner(d)
		delete(s.Handlers, routes.NoteVersions)
		return s, err
	}
	for _, tc := range []struct {
		name   string
		target app.Target
		want   string
	}{
		{"a handler for another target's route", notesTarget(app.Handlers{routes.ImageRead: func(*gin.Context) {}}),
			"target notes has a handler for GET /api/images/:userCuid/:noteCuid/:filename, a route of images"},
		{"a route without a handler", missing, "target notes has no handler for its route GET /api/notes/:cuid/versions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := app.New(context.Background(), cfg, app.Options{Process: "test", Targets: []app.Target{tc.target},
				Getenv: func(string) string { return "" }, Logs: &testkit.SyncBuffer{}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPostgresWithPendingMigrationsIsRefused(t *testing.T) {
	migrated := testkit.NewPostgresDB(t)
	// An empty database next to the migrated one: same server, no schema.
	admin, err := gorm.Open(postgres.Open(migrated), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Exec("DROP TABLE goose_db_version").Error; err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := admin.DB()
	_ = sqlDB.Close()
	cfg, err := config.Load(func(k string) string { return map[string]string{"SHARE_DATABASE_URL": migrated}[k] })
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.New(context.Background(), cfg, app.Options{Process: "test", Targets: []app.Target{panicking},
		Getenv: func(string) string { return "" }, Logs: &testkit.SyncBuffer{}})
	if err == nil || !strings.Contains(err.Error(), "sharenote migrate") {
		t.Fatalf("New = %v, want an error naming `sharenote migrate`", err)
	}
}

// noDrain starts a test server without the drain delay, which only the shutdown test needs.
var noDrain = testkit.WithEnv("SHARE_DRAIN_DELAY", "0s")

// readiness fetches /readyz and decodes its body.
func readiness(t *testing.T, s *testkit.Server) (int, httpx.Readiness) {
	t.Helper()
	r := s.Admin(t, "/readyz")
	var rd httpx.Readiness
	r.Decode(t, &rd)
	return r.Status, rd
}

// dependencyUp returns the value of sharenote_dependency_up for dependency, or "" when
// /metrics has no such series.
func dependencyUp(t *testing.T, s *testkit.Server, dependency string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^sharenote_dependency_up\{dependency="` + dependency + `"\} (\S+)$`)
	if m := re.FindStringSubmatch(string(s.Admin(t, "/metrics").Body)); m != nil {
		return m[1]
	}
	return ""
}

func TestReadyzReportsEachDependency(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := testkit.StartServer(t, b, []app.Target{panicking}, noDrain)
		status, rd := readiness(t, s)
		wantRedis, wantRedisUp := "up", "1"
		if b.RedisURL == "" {
			wantRedis, wantRedisUp = "not configured", ""
		}
		want := httpx.Readiness{Status: "ready", Checks: map[string]string{"database": "up", "object_store": "up", "redis": wantRedis}}
		if status != http.StatusOK || !reflect.DeepEqual(rd, want) {
			t.Errorf("/readyz = %d %+v, want 200 %+v", status, rd, want)
		}
		for _, d := range []string{"database", "object_store"} {
			if got := dependencyUp(t, s, d); got != "1" {
				t.Errorf(`sharenote_dependency_up{dependency=%q} = %q, want 1`, d, got)
			}
		}
		if got := dependencyUp(t, s, "redis"); got != wantRedisUp {
			t.Errorf(`sharenote_dependency_up{dependency="redis"} = %q, want %q`, got, wantRedisUp)
		}
	})
}

func TestRedisDownFailsOpenAndStaysReady(t *testing.T) {
	b := testkit.PostgresBackend(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "redis://" + ln.Addr().String() + "/0"
	_ = ln.Close() // Nothing listens there any more.
	b.RedisURL = dead
	s := testkit.StartServer(t, b, []app.Target{panicking}, noDrain)
	for range 3 {
		s.Do(t, testkit.Request{Method: "GET", Path: "/nowhere"}).Expect(t, http.StatusNotFound, "not_found")
	}
	// Every replica shares the Redis: its outage must not take them all out of the
	// load balancer. /readyz says what is down instead, without its address.
	status, rd := readiness(t, s)
	if status != http.StatusOK || rd.Status != "ready" || rd.Checks["redis"] != "down" || rd.Checks["database"] != "up" {
		t.Errorf("/readyz = %d %+v with Redis down, want 200 ready with redis down and database up", status, rd)
	}
	if body := string(s.Admin(t, "/readyz").Body); strings.Contains(body, ln.Addr().String()) {
		t.Errorf("/readyz %s shows Redis's address", body)
	}
	if got := dependencyUp(t, s, "redis"); got != "0" {
		t.Errorf(`sharenote_dependency_up{dependency="redis"} = %q with Redis down, want 0`, got)
	}
	// The per-IP limit goes on in the process; its batches to Redis fail and are counted.
	time.Sleep(300 * time.Millisecond)
	if m := string(s.Admin(t, "/metrics").Body); !regexp.MustCompile(`(?m)^sharenote_ratelimit_sync_errors_total [1-9]`).MatchString(m) {
		t.Error("sharenote_ratelimit_sync_errors_total did not count the failed batches")
	}
	if n := strings.Count(s.Logs.String(), "rate limiter cannot reach redis"); n != 1 {
		t.Errorf("logged the Redis outage %d times, want once per interval", n)
	}
}

func TestObjectStoreDownStaysReadyAndNamesIt(t *testing.T) {
	minio := testkit.StartMinIO(t)
	s := testkit.StartServer(t, minio.Backend(t), []app.Target{panicking}, noDrain)
	minio.Stop()
	status, rd := readiness(t, s)
	if status != http.StatusOK || rd.Status != "ready" || rd.Checks["object_store"] != "down" || rd.Checks["database"] != "up" {
		t.Errorf("/readyz = %d %+v with the object store down, want 200 ready with object_store down", status, rd)
	}
	if got := dependencyUp(t, s, "object_store"); got != "0" {
		t.Errorf(`sharenote_dependency_up{dependency="object_store"} = %q with the store down, want 0`, got)
	}
	minio.Start()
	// The first ping right after MinIO says it is ready may still fail (it did once in CI):
	// the check must come back up, within a bound.
	testkit.Eventually(t, 5*time.Second, "/readyz names the object store up once it is back", func() bool {
		_, rd := readiness(t, s)
		return rd.Checks["object_store"] == "up"
	})
}

func TestDatabaseDownStaysReadyAndNamesIt(t *testing.T) {
	b := testkit.PostgresBackend(t)
	s := testkit.StartServer(t, b, []app.Target{panicking}, noDrain)
	if status, rd := readiness(t, s); status != http.StatusOK || rd.Checks["database"] != "up" {
		t.Fatalf("/readyz = %d %+v before the outage, want 200 with the database up", status, rd)
	}
	// Take the database away for good: its connections are terminated and it is dropped,
	// so that neither the pool's connections nor new ones answer.
	u, err := url.Parse(b.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	server, err := gorm.Open(postgres.Open(u.String()), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Exec("DROP DATABASE " + name + " WITH (FORCE)").Error; err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := server.DB()
	_ = sqlDB.Close()

	began := time.Now()
	status, rd := readiness(t, s)
	if status != http.StatusOK || rd.Status != "ready" || rd.Checks["database"] != "down" || rd.Checks["redis"] != "up" {
		t.Errorf("/readyz = %d %+v with the database gone, want 200 ready with database down and redis up", status, rd)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("/readyz took %v with the database gone; the probe's timeout is 2s", took)
	}
	if got := dependencyUp(t, s, "database"); got != "0" {
		t.Errorf(`sharenote_dependency_up{dependency="database"} = %q with the database gone, want 0`, got)
	}
}

func TestPprofOnlyWithSharePprof(t *testing.T) {
	b := testkit.SQLiteBackend(t)
	off := testkit.StartServer(t, b, []app.Target{panicking}, noDrain)
	if r := off.Admin(t, "/debug/pprof/"); r.Status != http.StatusNotFound {
		t.Errorf("/debug/pprof/ = %d by default, want 404", r.Status)
	}
	on := testkit.StartServer(t, b, []app.Target{panicking}, noDrain, testkit.WithEnv("SHARE_PPROF", "true"))
	if r := on.Admin(t, "/debug/pprof/"); r.Status != http.StatusOK {
		t.Errorf("/debug/pprof/ = %d with SHARE_PPROF=true, want 200", r.Status)
	}
}

// blocking owns the public note read: GET /api/notes/slow signals entered and waits for
// release, any other cuid answers at once. Its job runs until the process stops it, then
// takes a moment to finish, as a job in the middle of a batch would.
type blocking struct {
	entered, release, jobRunning chan struct{}
	// jobStopped is set when the job's context ends, jobFinished when it has returned.
	jobStopped, jobFinished atomic.Bool
}

func (b *blocking) target() app.Target {
	return notesTarget(app.Handlers{routes.NoteRead: func(c *gin.Context) {
		if c.Param("cuid") == "slow" {
			close(b.entered)
			<-b.release
		}
		c.JSON(http.StatusOK, gin.H{"cuid": c.Param("cuid")})
	}}, app.Job{Name: "batch", Every: time.Millisecond, Run: func(ctx context.Context) error {
		if ctx.Err() != nil {
			return nil // A tick that raced with the stop.
		}
		close(b.jobRunning) // Run returns only when the process stops it: this runs once.
		<-ctx.Done()
		b.jobStopped.Store(true)
		time.Sleep(100 * time.Millisecond)
		b.jobFinished.Store(true)
		return nil
	}})
}

func TestShutdownDrainsInFlightRequestsAndStopsInOrder(t *testing.T) {
	const drain = 2 * time.Second
	b := testkit.SQLiteBackend(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL, "SHARE_DRAIN_DELAY": drain.String(), "SHARE_SHUTDOWN_TIMEOUT": "10s"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	mod := &blocking{entered: make(chan struct{}), release: make(chan struct{}), jobRunning: make(chan struct{})}
	a, err := app.New(context.Background(), cfg, app.Options{Process: "test", Targets: []app.Target{mod.target()},
		Getenv: func(string) string { return "" }, Logs: &testkit.SyncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	public, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	publicURL, adminURL := "http://"+public.Addr().String(), "http://"+admin.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, public, admin) }()
	// Every request on a connection of its own, so that "accepts" means a new connection.
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(u string) (int, error) {
		resp, err := client.Get(u)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return resp.StatusCode, err
	}
	if status, err := get(adminURL + "/readyz"); status != http.StatusOK {
		t.Fatalf("/readyz = %d %v while serving, want 200", status, err)
	}

	type result struct {
		status int
		err    error
	}
	inFlight := make(chan result, 1)
	go func() {
		status, err := get(publicURL + "/api/notes/slow")
		inFlight <- result{status, err}
	}()
	for what, ch := range map[string]chan struct{}{"the slow request never reached its handler": mod.entered, "the job never ran": mod.jobRunning} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal(what)
		}
	}

	cancel() // SIGTERM
	sigterm := time.Now()
	if status, err := get(adminURL + "/readyz"); status != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d %v right after SIGTERM, want 503", status, err)
	}
	if status, err := get(publicURL + "/api/notes/fast"); status != http.StatusOK {
		t.Errorf("a new request during the drain delay = %d %v, want 200", status, err)
	}
	if since := time.Since(sigterm); since >= drain {
		t.Fatalf("the checks took %v, longer than the drain delay: the test proves nothing", since)
	}

	// After the drain delay the public listener closes, while the slow request is still
	// running; the admin listener still answers until it has finished.
	for {
		conn, err := net.Dial("tcp", public.Addr().String())
		if err != nil {
			break
		}
		_ = conn.Close()
		if time.Since(sigterm) > drain+5*time.Second {
			t.Fatal("the public listener still accepts long after the drain delay")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if since := time.Since(sigterm); since < drain {
		t.Errorf("the public listener closed %v after SIGTERM, before the drain delay of %v", since, drain)
	}
	if status, err := get(adminURL + "/readyz"); status != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d %v while a request drains, want 503 from a still open admin listener", status, err)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v with a request still in flight", err)
	case r := <-inFlight:
		t.Fatalf("the slow request ended (%d, %v) before it was released", r.status, r.err)
	default:
	}
	if mod.jobStopped.Load() {
		t.Error("the jobs were stopped while a request was still in flight")
	}

	close(mod.release)
	if r := <-inFlight; r.err != nil || r.status != http.StatusOK {
		t.Errorf("the request in flight at SIGTERM = %d %v, want 200", r.status, r.err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after SIGTERM = %v, want a clean shutdown", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the last request finished")
	}
	if !mod.jobFinished.Load() {
		t.Error("Serve returned before the job it stopped had finished")
	}
	if _, err := net.Dial("tcp", admin.Addr().String()); err == nil {
		t.Error("the admin listener still accepts after Serve returned")
	}
}

func TestMigrateCommandPreparesAnEmptyDatabase(t *testing.T) {
	for name, url := range map[string]string{
		"postgres": testkit.NewEmptyPostgresDB(t),
		"sqlite":   "sqlite:" + t.TempDir() + "/fresh.db",
	} {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"SHARE_DATABASE_URL": url}
			var out, errOut strings.Builder
			run := func(args ...string) int {
				out.Reset()
				errOut.Reset()
				return app.Program{Name: "sharenote"}.Main(context.Background(),
					cli.Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errOut}, args)
			}
			if code := run("migrate"); code != 0 || !strings.Contains(out.String(), `"migrated"`) {
				t.Fatalf("migrate: exit %d, %q %q", code, out.String(), errOut.String())
			}
			if code := run("migrate"); code != 0 {
				t.Fatalf("a second migrate: exit %d, %q", code, errOut.String())
			}
			b := testkit.Backend{Name: name, DatabaseURL: url}
			s := testkit.StartServer(t, b, []app.Target{panicking}, noDrain)
			if r := s.Admin(t, "/readyz"); r.Status != http.StatusOK {
				t.Errorf("a server on the migrated database is not ready: %d", r.Status)
			}
		})
	}
}
