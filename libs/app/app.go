// Package app assembles sharenote processes. A process serves some targets of the routes
// table (modules) on one router over shared dependencies: each Deployment runs the one
// binary with one target, the all-in-one runs them all, and the dependencies (Postgres or
// SQLite, Redis or the in-process limiter) are chosen by configuration, never by forking
// code.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
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
	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/blob/blobstore"
	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/ratelimit"
	"github.com/sharenote/sharenote/libs/readcache"
	"github.com/sharenote/sharenote/libs/redisx"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/telemetry"
)

// Deps are the shared resources every module is built from.
type Deps struct {
	Config   config.Config
	Log      *slog.Logger
	Accounts *account.Core
	Settings *account.SettingsCore
	Notes    *note.Core
	// Reads is the per-process cache of public reads, kept current by the change feed.
	Reads    *readcache.Cache
	Registry prometheus.Registerer
	Tracer   trace.TracerProvider
	// Now is the clock; tests inject one to expire tokens and notes without sleeping.
	Now func() time.Time
}

// Handlers attach a target's handlers to its rows of the routes table.
type Handlers map[*routes.Route]gin.HandlerFunc

// Service is what a module contributes to a process: a handler for every route of its
// target, and the periodic jobs it runs while the process serves.
type Service struct {
	Handlers Handlers
	Jobs     []Job
}

// Job is work a service repeats every Every while the process serves.
type Job struct {
	Name  string
	Every time.Duration
	Run   func(context.Context) error
}

// Module is one target of the routes table: its name (one of routes.Targets) and how it
// is built from the shared dependencies.
type Module struct {
	Name string
	New  func(Deps) (Service, error)
}

// Options describe a process.
type Options struct {
	// Process names the process in logs and traces ("sharenote", "sharenote-notes", …).
	Process string
	// Modules are the targets this process serves; the routes of the others answer 404.
	Modules []Module
	Getenv  func(string) string
	// Logs receives the JSON log lines (stderr in production).
	Logs io.Writer
	// Now overrides the clock (tests only); nil means time.Now.
	Now func() time.Time
	// WrapBlobs, when set, wraps the object store SHARE_BLOB_URL opens (tests only: to
	// count or fail its calls through the whole stack).
	WrapBlobs func(blob.Store) blob.Store
}

// App is a built process, ready to serve.
type App struct {
	deps   Deps
	db     *gorm.DB
	blobs  blob.Store
	jobs   []Job
	engine *gin.Engine
	// uploads admits the requests with large bodies; its waiters give up when shutdown
	// begins.
	uploads  *httpx.Uploads
	admin    http.Handler
	rdb      *redis.Client
	feed     *changefeed.Feed
	draining atomic.Bool
	// dependencyUp is sharenote_dependency_up, set by every dependency check.
	dependencyUp *prometheus.GaugeVec
	closers      []func(context.Context) error
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

	// The per-IP limit, checked on every request, counts locally and reconciles with
	// Redis in batches; the authentication and mutation limits ask Redis every time.
	var lim limiters
	lim.perIP = ratelimit.NewMemory(now)
	lim.exact = lim.perIP
	if cfg.RedisURL != "" {
		if a.rdb, err = redisx.Open(cfg.RedisURL); err != nil {
			return nil, err
		}
		a.closers = append(a.closers, func(context.Context) error { return a.rdb.Close() })
		batched := ratelimit.NewBatched(a.rdb, cfg.RedisKeyPrefix, ratelimit.WithRegisterer(reg), ratelimit.WithLogger(log))
		a.closers = append(a.closers, batched.Close)
		lim.perIP = batched
		lim.exact = ratelimit.NewFailOpen(ratelimit.NewRedis(a.rdb, cfg.RedisKeyPrefix), log, reg)
	}
	a.feed = changefeed.New(a.rdb, cfg.RedisKeyPrefix, log, reg)
	reads := readcache.New(cfg.CacheBytes, a.feed.Fresh, now, reg)
	a.feed.OnChange(reads.Drop)
	a.db = gdb
	if a.blobs, err = blobstore.Open(ctx, cfg.BlobURL, opts.Getenv); err != nil {
		return nil, fmt.Errorf("SHARE_BLOB_URL: %w", err)
	}
	if opts.WrapBlobs != nil {
		a.blobs = opts.WrapBlobs(a.blobs)
	}
	accounts := accountdb.New(gdb)
	notes := notedb.New(gdb, a.blobs)
	a.deps = Deps{Config: cfg, Log: log,
		Accounts: account.NewCore(accounts, now, a.feed),
		Settings: account.NewSettingsCore(accounts, cfg.ImageQuotaBytes, a.feed),
		Notes: note.NewCore(notes, note.Config{Now: now, PublicURL: cfg.PublicURL, Quota: cfg.ImageQuotaBytes,
			Renderer: Renderer{}, Blobs: a.blobs, Notifier: a.feed, Log: log, Registerer: reg}),
		Reads:    reads,
		Registry: reg, Tracer: tp, Now: now}
	sessions := authn.NewCache(a.deps.Accounts, a.feed.Fresh, now)
	a.feed.OnChange(sessions.Drop)
	if cfg.ReapInterval > 0 {
		a.jobs = append(a.jobs, reapJob(a.deps, notes, accounts))
	}
	services := make(map[string]Service, len(opts.Modules))
	for _, m := range opts.Modules {
		s, err := m.New(a.deps)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", m.Name, err)
		}
		services[m.Name] = s
		a.jobs = append(a.jobs, s.Jobs...)
	}
	a.uploads = httpx.NewUploads(cfg.MaxUploads, cfg.UploadWait, reg)
	if a.engine, err = newRouter(a.deps, lim, sessions, a.uploads, opts.Process, services); err != nil {
		return nil, err
	}
	a.dependencyUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sharenote_dependency_up",
		Help: "1 while a shared dependency (database, object_store, redis) answered its last check, else 0; checked by /readyz and by every scrape."},
		[]string{"dependency"})
	// A scrape checks the dependencies first, so that the gauge is current even where
	// nothing probes /readyz (compose, systemd).
	reg.MustRegister(checkedCollector{a.dependencyUp, func() { a.checkDependencies(context.Background()) }})
	a.admin = httpx.Admin(httpx.AdminOptions{Ready: a.Readiness, Gatherer: reg, Pprof: cfg.Pprof})
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

// DB is the process's database, for tests and diagnostics; modules reach it only through
// the domain's cores.
func (a *App) DB() *gorm.DB { return a.db }

// Blobs returns the process's object store, for tests that inspect what it keeps.
func (a *App) Blobs() blob.Store { return a.blobs }

// Deps returns the dependencies the modules were built from.
func (a *App) Deps() Deps { return a.deps }

// Handler is the public router.
func (a *App) Handler() http.Handler { return a.engine }

// AdminHandler serves /healthz, /readyz, /metrics and, with SHARE_PPROF=true, pprof.
func (a *App) AdminHandler() http.Handler { return a.admin }

// dependencyTimeout bounds each dependency check, so that a dependency that hangs cannot
// hold /readyz past the kubelet's probe timeout (2 s in the chart). The checks run at once.
const dependencyTimeout = time.Second

// Readiness is what /readyz answers: ready while the process can serve (it was built, so
// its schema is current, and shutdown has not begun), with the state of each shared
// dependency, which never makes it unready (CONTRACT.md "Operations"). Once shutdown has
// begun it answers "draining" at once, without checking anything.
func (a *App) Readiness(ctx context.Context) httpx.Readiness {
	if a.draining.Load() {
		return httpx.Readiness{Status: "draining"}
	}
	return httpx.Readiness{Status: httpx.StatusReady, Checks: a.checkDependencies(ctx)}
}

// checkDependencies pings the database, the object store and, when configured, Redis, each within
// dependencyTimeout, records the result in sharenote_dependency_up and returns each
// dependency's state.
func (a *App) checkDependencies(ctx context.Context) map[string]string {
	checks := map[string]func(context.Context) error{
		"database":     func(ctx context.Context) error { return db.Ping(ctx, a.db) },
		"object_store": a.blobs.Ping,
	}
	if a.rdb != nil {
		checks["redis"] = func(ctx context.Context) error { return redisx.Ping(ctx, a.rdb) }
	}
	var mu sync.Mutex
	states := map[string]string{"redis": "not configured"}
	var wg sync.WaitGroup
	for name, check := range checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, dependencyTimeout)
			defer cancel()
			state, up := "up", 1.0
			if check(ctx) != nil {
				state, up = "down", 0
			}
			a.dependencyUp.WithLabelValues(name).Set(up)
			mu.Lock()
			states[name] = state
			mu.Unlock()
		})
	}
	wg.Wait()
	return states
}

// checkedCollector is a gauge vector whose values are refreshed by check before every
// collection.
type checkedCollector struct {
	*prometheus.GaugeVec
	check func()
}

// Collect refreshes the values, then collects them.
func (c checkedCollector) Collect(ch chan<- prometheus.Metric) {
	c.check()
	c.GaugeVec.Collect(ch)
}

// Serve serves until ctx is cancelled (SIGTERM), then stops in this order:
//  1. readiness turns off at once, so that load balancers stop sending requests, and
//     uploads waiting for a slot (SHARE_UPLOAD_WAIT) are refused with 503;
//  2. for SHARE_DRAIN_DELAY both listeners still accept and serve, for the load balancers
//     (and clients) that have not noticed yet, and ask keep-alive clients to reconnect;
//  3. the public listener closes and its requests in flight finish, then the admin
//     listener closes, all within SHARE_SHUTDOWN_TIMEOUT (requests still running then
//     are cut);
//  4. the jobs and the change feed, which in-flight requests may still rely on, stop and
//     are awaited.
//
// The caller then closes the stores (Close), which nothing uses any more.
func (a *App) Serve(ctx context.Context, public, admin net.Listener) error {
	cfg := a.deps.Config
	a.deps.Log.Info("serving", "addr", public.Addr().String(), "admin_addr", admin.Addr().String(), "config", cfg)
	// The servers' context ends only after readiness has turned off.
	serversCtx, stopServers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServers()
	go func() {
		select {
		case <-ctx.Done():
			a.draining.Store(true)
			// Uploads waiting for a slot are refused now, to be sent to another replica,
			// rather than hold the shutdown.
			a.uploads.Stop()
			a.deps.Log.Info("shutting down", "drain_delay", cfg.DrainDelay.String(), "shutdown_timeout", cfg.ShutdownTimeout.String())
			stopServers()
		case <-serversCtx.Done():
		}
	}()
	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer stopJobs()
	var background sync.WaitGroup
	for _, j := range a.jobs {
		background.Go(func() { a.repeat(jobsCtx, j) })
	}
	background.Go(func() { a.feed.Run(jobsCtx) })
	err := httpx.Serve(serversCtx, httpx.Shutdown{Drain: cfg.DrainDelay, Timeout: cfg.ShutdownTimeout},
		httpx.Listener{Name: "public", Net: public, Server: httpx.NewServer(a.engine)},
		httpx.Listener{Name: "admin", Net: admin, Server: httpx.NewServer(a.admin)})
	// A listener that failed stops the process too: it is no longer ready either.
	a.draining.Store(true)
	stopJobs()
	background.Wait()
	a.deps.Log.Info("stopped")
	return err
}

// repeat runs j every j.Every until ctx ends, logging its failures.
func (a *App) repeat(ctx context.Context, j Job) {
	ctx = context.WithValue(ctx, jobKey{}, j.Name)
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

type jobKey struct{}

// InJob reports whether ctx is a background job's (Job.Run), not a request's: what a
// job does is not the work of the requests running beside it.
func InJob(ctx context.Context) bool { return ctx != nil && ctx.Value(jobKey{}) != nil }

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
