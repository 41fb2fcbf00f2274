// Package app assembles sharenote processes. A process serves some targets of the routes
// table on one router over shared dependencies: each Deployment runs the one
// binary with one target, the all-in-one runs them all, and the dependencies (Postgres or
// SQLite, Redis or the in-process limiter) are chosen by configuration, never by forking
// code.
//
// app.go assembles a process (New) from its targets and the dependencies they need
// (needs.go: each target declares them, and New opens no other); serve.go serves it
// and shuts it down in order (Serve, Run) and runs its jobs; ready.go answers /readyz and
// checks the shared dependencies; router.go mounts the targets' routes. program.go is the
// binary's command line (on libs/cli) with serve, routes and version; configcmd.go,
// migrate.go and reap.go are the operator's other commands, stores.go opens the database
// for them, and render.go is the renderer the notes are built with.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
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
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/outbox"
	"github.com/sharenote/sharenote/libs/ratelimit"
	"github.com/sharenote/sharenote/libs/readcache"
	"github.com/sharenote/sharenote/libs/redisx"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/site"
	"github.com/sharenote/sharenote/libs/telemetry"
)

// Deps are the shared resources the targets are built from. Only what a process's targets
// need is behind them, and a target is given only what its own Needs declare: the note
// domain's use cases come from accessors (Publisher, Reader, …: notes.go) that fail,
// failing the start, when the target's Needs lack what the use case needs.
type Deps struct {
	Config   config.Config
	Log      *slog.Logger
	Accounts *account.Core
	Settings *account.SettingsCore
	// Sites are the site settings' use cases.
	Sites *site.Core
	notes noteCases
	// needs are those of the target the Deps are given to (the process's, in App.Deps).
	needs Needs
	// Reads is the per-process cache of public reads, kept current by the change feed;
	// nil unless a target needs the change feed.
	Reads *readcache.Cache
	// Edge is what public reads tell the operator's edge; nil when none is configured.
	Edge     *noteapi.Edge
	Registry prometheus.Registerer
	Tracer   trace.TracerProvider
	// Now is the clock; tests inject one to expire tokens and notes without sleeping.
	Now func() time.Time
}

// Handlers attach a target's handlers to its rows of the routes table.
type Handlers map[*routes.Route]gin.HandlerFunc

// Parts are what a target adds to a process: a handler for every route of the target, and
// the periodic jobs it runs while the process serves.
type Parts struct {
	Handlers Handlers
	Jobs     []Job
}

// Job is work a target repeats every Every while the process serves.
type Job struct {
	Name  string
	Every time.Duration
	Run   func(context.Context) error
}

// Target is one target of the routes table, the unit that `serve --target` names and a
// Deployment runs: its name (one of routes.Targets) and how its parts are built from the
// shared dependencies.
type Target struct {
	Name string
	// Needs are what the target uses; New must build its parts from those alone.
	Needs Needs
	New   func(Deps) (Parts, error)
}

// Options describe a process.
type Options struct {
	// Process names the process in logs and traces ("sharenote", "sharenote-notes", …).
	Process string
	// Targets are the targets this process serves; the routes of the others answer 404.
	Targets []Target
	Getenv  func(string) string
	// Logs receives the JSON log lines (stderr in production).
	Logs io.Writer
	// Now overrides the clock (tests only); nil means time.Now.
	Now func() time.Time
}

// App is a built process, ready to serve.
type App struct {
	deps Deps
	// needs are the union of the targets' needs; opened names what New opened and built
	// for them, in order ("database", "redis", "object store", "change feed", "renderer").
	needs  Needs
	opened []string
	db     *gorm.DB
	// blobs is nil when no target needs the object store.
	blobs    blob.Store
	notes    *notedb.Store
	accounts *accountdb.Store
	jobs     []Job
	engine   *gin.Engine
	// uploads admits the requests with large bodies; its waiters give up when shutdown
	// begins.
	uploads *httpx.Uploads
	admin   http.Handler
	rdb     *redis.Client
	feed    *changefeed.Feed
	// relay announces the outbox of changes on the feed: in a process that has a feed and
	// writes (nil otherwise).
	relay    *outbox.Relay
	draining atomic.Bool
	// dependencyUp is sharenote_dependency_up, set by every dependency check.
	dependencyUp *prometheus.GaugeVec
	closers      []func(context.Context) error
}

// New connects the dependencies that its targets need (Target.Needs), and no other, and
// builds the targets' router. On the embedded default (SQLite) it applies pending
// migrations; on Postgres it refuses to start on an outdated schema, because migrations
// there are the operator's job.
func New(ctx context.Context, cfg config.Config, opts Options) (_ *App, err error) {
	a := &App{needs: Union(opts.Targets)}
	defer func() {
		if err != nil {
			_ = a.Close(context.WithoutCancel(ctx))
		}
	}()
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	log := a.newLogger(cfg, opts, reg)

	tp, err := a.connect(ctx, cfg, opts, reg)
	if err != nil {
		return nil, err
	}
	lim := a.newLimiters(cfg, now, log, reg)
	var sessions authn.Verifier
	a.deps, sessions = a.newDeps(cfg, log, reg, tp, now)
	if err := a.newEdge(ctx, cfg, reg); err != nil {
		return nil, err
	}
	if cfg.ReapInterval > 0 && slices.Contains(a.needs.Jobs, JobReap) {
		a.jobs = append(a.jobs, reapJob(a.deps, note.NewReaper(a.notes, a.blobs), a.accounts))
	}
	parts, err := a.buildTargets(opts.Targets)
	if err != nil {
		return nil, err
	}
	a.uploads = httpx.NewUploads(cfg.MaxUploads, cfg.UploadWait, reg)
	if a.engine, err = newRouter(a.deps, lim, sessions, a.uploads, parts); err != nil {
		return nil, err
	}
	a.registerDependencyUp(reg)
	a.admin = httpx.Admin(httpx.AdminOptions{Ready: a.Readiness, Gatherer: reg, Pprof: cfg.Pprof})
	return a, nil
}

// newLogger is the process's logger. Its lines reach opts.Logs through a logging.Writer,
// so that a stalled stderr never holds up a request (sharenote_log_lines_dropped_total
// counts the lines it had no room for); the last of them are written when the app closes.
func (a *App) newLogger(cfg config.Config, opts Options, reg prometheus.Registerer) *slog.Logger {
	w := logging.NewWriter(opts.Logs, logging.DefaultBuffer)
	a.closers = append(a.closers, w.Close)
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sharenote_log_lines_dropped_total",
		Help: "Log lines dropped because the log's reader (stderr) did not keep up."}, func() float64 { return float64(w.Dropped()) }))
	return logging.New(w, cfg.LogLevel, opts.Process)
}

// newDeps builds the domain's cores over what connect opened, and, when a target needs
// the change feed, the feed, the cache of public reads and the session cache it keeps
// current (nil otherwise: a target without bearer routes verifies no session).
func (a *App) newDeps(cfg config.Config, log *slog.Logger, reg *prometheus.Registry, tp trace.TracerProvider, now func() time.Time) (Deps, authn.Verifier) {
	var (
		reads         *readcache.Cache
		accountEvents account.Notifier
		noteEvents    note.Notifier
		renderer      note.Renderer
	)
	if a.needs.ChangeFeed {
		a.feed = changefeed.New(a.rdb, cfg.RedisKeyPrefix, log, reg)
		reads = readcache.New(cfg.CacheBytes, a.feed.Fresh, now, reg)
		a.feed.OnChange(reads.Drop)
		a.opened = append(a.opened, "change feed")
		if a.needs.Database == ReadWrite {
			a.relay = outbox.NewRelay(a.db, a.feed, log, reg)
			accountEvents, noteEvents = a.relay, a.relay
		}
	}
	if a.needs.Renderer {
		renderer = Renderer{}
		a.opened = append(a.opened, "renderer")
	}
	changes := newWriter(cfg, a.feed)
	a.accounts = accountdb.New(a.db, changes)
	a.notes = notedb.New(a.db, changes)
	d := Deps{Config: cfg, Log: log,
		Accounts: account.NewCore(a.accounts, now, accountEvents),
		Settings: account.NewSettingsCore(a.accounts, cfg.ImageQuotaBytes, accountEvents),
		Sites:    newSites(cfg, a.accounts, notedb.NewReads(a.db), now, accountEvents),
		needs:    a.needs,
		Reads:    reads,
		Registry: reg, Tracer: tp, Now: now}
	d.notes = a.newNoteCases(noteConfig(cfg, d, noteEvents, reg), renderer)
	if a.feed == nil {
		return d, nil
	}
	sessions := authn.NewCache(d.Accounts, a.feed.Fresh, now)
	a.feed.OnChange(sessions.Drop)
	return d, sessions
}

// connect starts the tracer provider and opens what the targets need of the database,
// Redis (when configured) and the object store, and returns the tracer provider. Close
// flushes the tracer and closes the database and Redis.
func (a *App) connect(ctx context.Context, cfg config.Config, opts Options, reg prometheus.Registerer) (trace.TracerProvider, error) {
	tp, flush, err := telemetry.NewTracerProvider(ctx, opts.Process, opts.Getenv)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, flush)

	if a.needs.Database != NoDatabase {
		gdb, err := OpenDB(ctx, cfg.DatabaseURL, tp)
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, func(context.Context) error { db.Close(gdb); return nil })
		a.db = gdb
		a.opened = append(a.opened, "database")
		sqlDB, _ := gdb.DB()
		telemetry.RegisterDBStats(reg, sqlDB)
	}

	if a.needs.Redis && cfg.RedisURL != "" {
		if a.rdb, err = redisx.Open(cfg.RedisURL); err != nil {
			return nil, err
		}
		a.closers = append(a.closers, func(context.Context) error { return a.rdb.Close() })
		a.opened = append(a.opened, "redis")
	}

	if a.needs.ObjectStore {
		if a.blobs, err = blobstore.Open(ctx, cfg.BlobURL, opts.Getenv); err != nil {
			return nil, fmt.Errorf("SHARE_BLOB_URL: %w", err)
		}
		a.opened = append(a.opened, "object store")
	}
	return tp, nil
}

// newLimiters returns the process's rate limiters. With Redis, the per-IP limit, checked
// on every request, counts locally and reconciles with Redis in batches; the
// authentication and mutation limits ask Redis every time. Without it, both count in
// process.
func (a *App) newLimiters(cfg config.Config, now func() time.Time, log *slog.Logger, reg prometheus.Registerer) limiters {
	if a.rdb == nil {
		mem := ratelimit.NewMemory(now)
		return limiters{perIP: mem, exact: mem}
	}
	batched := ratelimit.NewBatched(a.rdb, cfg.RedisKeyPrefix, ratelimit.WithRegisterer(reg), ratelimit.WithLogger(log))
	a.closers = append(a.closers, batched.Close)
	return limiters{perIP: batched, exact: ratelimit.NewFailOpen(ratelimit.NewRedis(a.rdb, cfg.RedisKeyPrefix), log, reg)}
}

// buildTargets builds each target's parts from the dependencies, keyed by target name,
// and gathers their jobs, which the target's needs must declare.
func (a *App) buildTargets(targets []Target) (map[string]Parts, error) {
	parts := make(map[string]Parts, len(targets))
	for _, m := range targets {
		d := a.deps
		d.needs = m.Needs
		s, err := m.New(d)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", m.Name, err)
		}
		if err := m.declares(s.Jobs); err != nil {
			return nil, err
		}
		parts[m.Name] = s
		a.jobs = append(a.jobs, s.Jobs...)
	}
	return parts, nil
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

// DB is the process's database handle, for tests that watch the statements this process
// runs (gorm callbacks); targets reach the database only through the domain's use cases,
// and a test that reads what was stored opens the database itself (testkit.OpenDB).
func (a *App) DB() *gorm.DB { return a.db }

// Deps returns the dependencies the targets were built from.
func (a *App) Deps() Deps { return a.deps }

// Close releases the dependencies in the reverse order of their start.
func (a *App) Close(ctx context.Context) error {
	var errList []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errList = append(errList, a.closers[i](ctx))
	}
	a.closers = nil
	return errors.Join(errList...)
}
