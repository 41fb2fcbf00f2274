package app

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/httpx"
)

// Serve serves until ctx is cancelled (SIGTERM), then stops in this order:
//  1. readiness turns off at once, so that load balancers stop sending requests, and
//     uploads waiting for a slot (SHARE_UPLOAD_WAIT) are refused with 503;
//  2. for SHARE_DRAIN_DELAY both listeners still accept and serve, for the load balancers
//     (and clients) that have not noticed yet, and ask keep-alive clients to reconnect;
//  3. the public listener closes and its requests in flight finish, then the admin
//     listener closes, all within SHARE_SHUTDOWN_TIMEOUT (requests still running then
//     are cut);
//  4. the jobs, the change feed and its relay, which in-flight requests may still rely
//     on, stop and are awaited (the relay announces what is due once more).
//
// The caller then closes the stores (Close), which nothing uses any more.
func (a *App) Serve(ctx context.Context, public, admin net.Listener) error {
	cfg := a.deps.Config
	a.deps.Log.Info("serving", "addr", public.Addr().String(), "admin_addr", admin.Addr().String(), "opened", a.opened, "jobs", a.jobNames(), "config", cfg)
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
	if a.feed != nil {
		background.Go(func() { a.feed.Run(jobsCtx) })
	}
	if a.relay != nil {
		background.Go(func() { a.relay.Run(jobsCtx) })
	}
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

// jobNames are the names of the jobs the process runs while it serves.
func (a *App) jobNames() []string {
	names := make([]string, len(a.jobs))
	for i, j := range a.jobs {
		names[i] = j.Name
	}
	return names
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
