package app

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/redisx"
)

// dependencyTimeout bounds each dependency check, so that a dependency that hangs cannot
// hold /readyz past the kubelet's probe timeout (2 s in the chart). The checks run at once.
const dependencyTimeout = time.Second

// Readiness is what /readyz answers: ready while the process can serve (it was built, so
// its schema is current, and shutdown has not begun), with the state of each shared
// dependency, which never makes it unready (docs/operations.md "Health and shutdown").
// Once shutdown has begun it answers "draining" at once, without checking anything.
func (a *App) Readiness(ctx context.Context) httpx.Readiness {
	if a.draining.Load() {
		return httpx.Readiness{Status: "draining"}
	}
	return httpx.Readiness{Status: httpx.StatusReady, Checks: a.checkDependencies(ctx)}
}

// checkDependencies pings the dependencies the process opened (the database, the object
// store and Redis, as its targets need them and the configuration sets them), each within
// dependencyTimeout, records the result in sharenote_dependency_up and returns each
// dependency's state; Redis that a target needs but SHARE_REDIS_URL leaves out is "not
// configured".
func (a *App) checkDependencies(ctx context.Context) map[string]string {
	checks := map[string]func(context.Context) error{}
	if a.db != nil {
		checks["database"] = func(ctx context.Context) error { return db.Ping(ctx, a.db) }
	}
	if a.blobs != nil {
		checks["object_store"] = a.blobs.Ping
	}
	if a.rdb != nil {
		checks["redis"] = func(ctx context.Context) error { return redisx.Ping(ctx, a.rdb) }
	}
	states := map[string]string{}
	if a.needs.Redis && a.rdb == nil {
		states["redis"] = "not configured"
	}
	var mu sync.Mutex
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

// registerDependencyUp registers sharenote_dependency_up on reg. A scrape checks the
// dependencies first, so that the gauge is current even where nothing probes /readyz
// (compose, systemd).
func (a *App) registerDependencyUp(reg prometheus.Registerer) {
	a.dependencyUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sharenote_dependency_up",
		Help: "1 while a shared dependency that the process's targets need (database, object_store, redis) answered its last check, else 0; checked by /readyz and by every scrape."},
		[]string{"dependency"})
	reg.MustRegister(checkedCollector{a.dependencyUp, func() { a.checkDependencies(context.Background()) }})
}
