package app

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/edge"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/outbox"
)

// purgeEvery is how often the purge job looks at the outbox: a purge reaches the edges
// within about this long of its commit, and an edge that comes back within it.
const purgeEvery = 200 * time.Millisecond

// purgeLogEvery is how often the purge job logs that it still fails (an edge outage).
const purgeLogEvery = 10 * time.Second

// newWriter is the writer of the stores' changes (libs/outbox): of the process whose
// change feed is feed (nil: none), due for the edge when SHARE_EDGE_PURGE_URLS names
// edges. It dates rows by the wall clock, not the injected one by which notes expire:
// its times are about delivery.
func newWriter(cfg config.Config, feed *changefeed.Feed) *outbox.Writer {
	origin := ""
	if feed != nil {
		origin = feed.Origin()
	}
	return outbox.NewWriter(time.Now, origin, len(cfg.EdgePurgeURLs) > 0)
}

// Public returns the public reads of a target: from the cache of public reads, with the
// edge's headers when an edge is configured.
func (d Deps) Public() *noteapi.Public { return noteapi.NewPublic(d.Reads, d.Now, d.Edge) }

// newEdge, when SHARE_EDGE_PURGE_URLS names edges, gives the public reads that come
// through an edge (SHARE_EDGE_ADDRESSES) their edge headers, and adds the purge job when
// a target declares it (the stores' changes are due for it: newWriter). Without an edge
// it does nothing.
func (a *App) newEdge(ctx context.Context, cfg config.Config, reg prometheus.Registerer) error {
	if len(cfg.EdgePurgeURLs) == 0 || a.db == nil {
		return nil
	}
	keys, err := edge.LoadKeys(ctx, a.db)
	if err != nil {
		return err
	}
	ips, via := httpx.NewClientIPs(cfg.TrustedProxies), cfg.EdgeAddresses
	a.deps.Edge = &noteapi.Edge{Keys: keys, MaxAge: cfg.EdgeMaxAge, Through: func(r *http.Request) bool { return ips.Through(r, via) }}
	if a.needs.Database == ReadWrite && slices.Contains(a.needs.Jobs, JobPurge) {
		w := edge.NewWorker(a.db, keys, cfg.EdgePurgeURLs, edge.DefaultBounds, time.Now, reg)
		a.jobs = append(a.jobs, purgeJob(w.Run))
	}
	return nil
}

// purgeJob is the job that runs the purge worker's run, returning its failures to be
// logged at most once every purgeLogEvery (an edge outage fails every run).
func purgeJob(run func(context.Context) error) Job {
	var logged time.Time
	return Job{Name: JobPurge, Every: purgeEvery, Run: func(ctx context.Context) error {
		err := run(ctx)
		if err == nil || time.Since(logged) < purgeLogEvery {
			return nil
		}
		logged = time.Now()
		return err
	}}
}
