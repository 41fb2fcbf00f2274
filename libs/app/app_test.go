package app_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// panicking owns the public note read and panics in it.
func panicking(app.Deps) (app.Service, error) {
	return app.Service{Name: routes.Notes, Handlers: map[string]gin.HandlerFunc{
		routes.NoteRead: func(*gin.Context) { panic("secret internal state: password=hunter2") },
	}}, nil
}

func TestPanickingHandlerIs500WithNothingInternal(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := testkit.StartServer(t, b, []app.Module{panicking})
		resp := s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/abc"}).Expect(t, http.StatusInternalServerError, "internal_error")
		for _, leak := range []string{"hunter2", "panic", "goroutine", ".go:"} {
			if strings.Contains(string(resp.Body), leak) {
				t.Errorf("500 body %s leaks %q", resp.Body, leak)
			}
		}
		if !strings.Contains(s.Logs.String(), "hunter2") || !strings.Contains(s.Logs.String(), "goroutine") {
			t.Error("the panic and its stack are not in the logs")
		}
		// The server survives the panic.
		s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/abc"}).Expect(t, http.StatusInternalServerError, "internal_error")
	})
}

func TestModuleCannotClaimAnotherServicesRoute(t *testing.T) {
	bad := func(app.Deps) (app.Service, error) {
		return app.Service{Name: routes.Auth, Handlers: map[string]gin.HandlerFunc{routes.NoteRead: func(*gin.Context) {}}}, nil
	}
	b := testkit.SQLiteBackend(t)
	cfg, err := config.Load(func(k string) string { return map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL}[k] })
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.New(context.Background(), cfg, app.Options{Process: "test", Modules: []app.Module{bad}, Getenv: func(string) string { return "" }, Logs: &testkit.SyncBuffer{}})
	if err == nil || !strings.Contains(err.Error(), "does not own") {
		t.Fatalf("New = %v, want a route ownership error", err)
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
	_, err = app.New(context.Background(), cfg, app.Options{Process: "test", Getenv: func(string) string { return "" }, Logs: &testkit.SyncBuffer{}})
	if err == nil || !strings.Contains(err.Error(), "sharenote migrate") {
		t.Fatalf("New = %v, want an error naming `sharenote migrate`", err)
	}
}

func TestRedisDownFailsOpenAndIsNotReady(t *testing.T) {
	b := testkit.PostgresBackend(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "redis://" + ln.Addr().String() + "/0"
	_ = ln.Close() // Nothing listens there any more.
	b.RedisURL = dead
	s := testkit.StartServer(t, b, []app.Module{panicking})
	for range 3 {
		s.Do(t, testkit.Request{Method: "GET", Path: "/nowhere"}).Expect(t, http.StatusNotFound, "not_found")
	}
	if r := s.Admin(t, "/readyz"); r.Status != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d with Redis down, want 503", r.Status)
	}
	if m := string(s.Admin(t, "/metrics").Body); !strings.Contains(m, "sharenote_ratelimit_errors_total 3") {
		t.Error("sharenote_ratelimit_errors_total is not 3")
	}
	if n := strings.Count(s.Logs.String(), "rate limiter unavailable"); n != 1 {
		t.Errorf("logged the Redis outage %d times, want once per interval", n)
	}
}

func TestShutdownTurnsReadinessOffAndDrains(t *testing.T) {
	b := testkit.SQLiteBackend(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL, "SHARE_SHUTDOWN_TIMEOUT": "2s"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, app.Options{Process: "test", Getenv: func(string) string { return "" }, Logs: &testkit.SyncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	public, _ := net.Listen("tcp", "127.0.0.1:0")
	admin, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, public, admin) }()
	if err := a.Ready(context.Background()); err != nil {
		t.Fatalf("not ready while serving: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve after SIGTERM = %v, want a clean shutdown", err)
	}
	if err := a.Ready(context.Background()); err == nil {
		t.Error("still ready after shutdown began")
	}
	if _, err := net.Dial("tcp", public.Addr().String()); err == nil {
		t.Error("the public listener still accepts connections")
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
					app.Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errOut}, args)
			}
			if code := run("migrate"); code != 0 || !strings.Contains(out.String(), `"migrated"`) {
				t.Fatalf("migrate: exit %d, %q %q", code, out.String(), errOut.String())
			}
			if code := run("migrate"); code != 0 {
				t.Fatalf("a second migrate: exit %d, %q", code, errOut.String())
			}
			b := testkit.Backend{Name: name, DatabaseURL: url}
			s := testkit.StartServer(t, b, []app.Module{panicking})
			if r := s.Admin(t, "/readyz"); r.Status != http.StatusOK {
				t.Errorf("a server on the migrated database is not ready: %d", r.Status)
			}
		})
	}
}
