// Package app assembles sharenote processes. A process is a set of modules (services)
// mounted on one router over shared dependencies: each service binary runs one module, the
// all-in-one binary runs them all, and the dependencies (Postgres or SQLite, Redis or the
// in-process limiter) are chosen by configuration, never by forking code.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/accountdb"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/ratelimit"
	"github.com/sharenote/sharenote/libs/redisx"
	"github.com/sharenote/sharenote/libs/telemetry"
)

// Deps are the shared resources every module is built from.
type Deps struct {
	Config   config.Config
	Log      *slog.Logger
	DB       *gorm.DB
	Accounts *account.Core
	Settings *account.SettingsCore
	Notes    *note.Core
	Registry prometheus.Registerer
	Tracer   trace.TracerProvider
	// Now is the clock; tests inject one to expire tokens and notes without sleeping.
	Now func() time.Time
}

// Service is a module's share of the routes table: handlers keyed by route ID, and the
// periodic jobs it runs while the process serves.
type Service struct {
	Name     string
	Handlers map[string]gin.HandlerFunc
	Jobs     []Job
}

// Job is work a service repeats every Every while the process serves.
type Job struct {
	Name  string
	Every time.Duration
	Run   func(context.Context) error
}

// Module builds one service from the shared dependencies.
type Module func(Deps) (Service, error)

// Options describe a process.
type Options struct {
	// Process names the process in logs and traces ("sharenote", "auth", …).
	Process string
	Modules []Module
	Getenv  func(string) string
	// Logs receives the JSON log lines (stderr in production).
	Logs io.Writer
	// Now overrides the clock (tests only); nil means time.Now.
	Now func() time.Time
}

// App is a built process, ready to serve.
type App struct {
	deps     Deps
	jobs     []Job
	engine   *gin.Engine
	admin    http.Handler
	rdb      *redis.Client
	draining atomic.Bool
	closers  []func(context.Context) error
}

// New connects the dependencies the configuration names and builds the modules' router.
// On the embedded default (SQLite) it applies pending migrations; on Postgres it refuses to
// start on an outdated schema, because migrations there are the operator's job.
func New(ctx context.Context, cfg config.Config, opts Options) (_ *App, err error) {
	a := &App{}
	defer func() {
		if err != nil {
			_ = a.Close(context.WithoutCancel(ctx))
		}
	}()
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	log := logging.New(opts.Logs, cfg.LogLevel, opts.Process)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	tp, flush, err := telemetry.NewTracerProvider(ctx, opts.Process, opts.Getenv)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, flush)

	gdb, err := OpenDB(ctx, cfg.DatabaseURL, tp)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func(context.Context) error { db.Close(gdb); return nil })
	sqlDB, _ := gdb.DB()
	telemetry.RegisterDBStats(reg, sqlDB)

	var lim ratelimit.Limiter = ratelimit.NewMemory(now)
	if cfg.RedisURL != "" {
		if a.rdb, err = redisx.Open(cfg.RedisURL); err != nil {
			return nil, err
		}
		a.closers = append(a.closers, func(context.Context) error { return a.rdb.Close() })
		lim = ratelimit.NewFailOpen(ratelimit.NewRedis(a.rdb, cfg.RedisKeyPrefix), log, reg)
	}

	accounts := accountdb.New(gdb)
	a.deps = Deps{Config: cfg, Log: log, DB: gdb,
		Accounts: account.NewCore(accounts, now),
		Settings: account.NewSettingsCore(accounts, cfg.ImageQuotaBytes),
		Notes:    note.NewCore(notedb.New(gdb), now, cfg.PublicURL, cfg.ImageQuotaBytes),
		Registry: reg, Tracer: tp, Now: now}
	services := make([]Service, 0, len(opts.Modules))
	for _, m := range opts.Modules {
		s, err := m(a.deps)
		if err != nil {
			return nil, fmt.Errorf("module: %w", err)
		}
		services = append(services, s)
		a.jobs = append(a.jobs, s.Jobs...)
	}
	if a.engine, err = newRouter(a.deps, lim, opts.Process, services); err != nil {
		return nil, err
	}
	a.admin = httpx.Admin(a.Ready, reg)
	return a, nil
}

// OpenDB opens the database and makes sure its schema is current: migrated in place on
// SQLite, checked on Postgres.
func OpenDB(ctx context.Context, url string, tp trace.TracerProvider) (*gorm.DB, error) {
	gdb, err := db.Open(ctx, url, tp)
	if err != nil {
		return nil, err
	}
	if db.Dialect(gdb) == db.SQLite {
		err = db.Migrate(ctx, gdb)
	} else {
		err = db.CheckCurrent(ctx, gdb)
	}
	if err != nil {
		db.Close(gdb)
		return nil, err
	}
	return gdb, nil
}

// Deps returns the dependencies the modules were built from.
func (a *App) Deps() Deps { return a.deps }

// Handler is the public router.
func (a *App) Handler() http.Handler { return a.engine }

// AdminHandler serves /healthz, /readyz, /metrics and pprof.
func (a *App) AdminHandler() http.Handler { return a.admin }

// Ready reports nil while the process should receive traffic: shutdown has not begun, the
// database answers and, when configured, Redis answers.
func (a *App) Ready(ctx context.Context) error {
	if a.draining.Load() {
		return errors.New("shutting down")
	}
	if err := db.Ping(ctx, a.deps.DB); err != nil {
		return err
	}
	if a.rdb != nil {
		return redisx.Ping(ctx, a.rdb)
	}
	return nil
}

// Serve serves until ctx is cancelled (SIGTERM). Readiness turns off first, so that load
// balancers stop sending new requests, then in-flight requests drain within the shutdown
// timeout.
func (a *App) Serve(ctx context.Context, public, admin net.Listener) error {
	a.deps.Log.Info("serving", "addr", public.Addr().String(), "admin_addr", admin.Addr().String(), "config", a.deps.Config)
	serveCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
			a.draining.Store(true)
			a.deps.Log.Info("shutting down")
			cancel()
		case <-serveCtx.Done():
		}
	}()
	for _, j := range a.jobs {
		go a.repeat(serveCtx, j)
	}
	return httpx.Serve(serveCtx, a.deps.Config.ShutdownTimeout, map[net.Listener]*http.Server{
		public: httpx.NewServer(a.engine),
		admin:  httpx.NewServer(a.admin),
	})
}

// repeat runs j every j.Every until ctx ends, logging its failures.
func (a *App) repeat(ctx context.Context, j Job) {
	t := time.NewTicker(j.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := j.Run(ctx); err != nil && ctx.Err() == nil {
				a.deps.Log.ErrorContext(ctx, "job failed", "job", j.Name, "err", err)
			}
		}
	}
}

// Close releases the dependencies in the reverse order of their start.
func (a *App) Close(ctx context.Context) error {
	var errList []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errList = append(errList, a.closers[i](ctx))
	}
	a.closers = nil
	return errors.Join(errList...)
}

// Run builds the process from cfg, listens on the configured addresses and serves until
// ctx is cancelled.
func Run(ctx context.Context, cfg config.Config, opts Options) error {
	a, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer func() { _ = a.Close(context.WithoutCancel(ctx)) }()
	var lc net.ListenConfig
	public, err := lc.Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	admin, err := lc.Listen(ctx, "tcp", cfg.AdminAddr)
	if err != nil {
		_ = public.Close()
		return fmt.Errorf("listen admin: %w", err)
	}
	return a.Serve(ctx, public, admin)
}
