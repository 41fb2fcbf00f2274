package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// StatusReady is the Readiness status of a process that should receive traffic.
const StatusReady = "ready"

// Readiness is what /readyz answers.
type Readiness struct {
	// Status is StatusReady while the process can serve (started, schema current, not
	// draining); any other value, such as "draining", makes /readyz answer 503.
	Status string `json:"status"`
	// Checks maps each shared dependency to "up", "down" or "not configured". They are
	// reported, never a reason for 503: an outage of a dependency that every replica
	// shares would take every replica out of the load balancer at once
	// (docs/operations.md "Health and shutdown"), and then clients get the load
	// balancer's errors instead of ours.
	Checks map[string]string `json:"checks,omitempty"`
}

// AdminOptions configure the admin listener's handler.
type AdminOptions struct {
	// Ready answers /readyz; it must return within the probe's timeout.
	Ready func(context.Context) Readiness
	// Gatherer is what /metrics exposes.
	Gatherer prometheus.Gatherer
	// Pprof serves /debug/pprof/; without it those paths are 404.
	Pprof bool
}

// Admin returns the admin listener's handler: /healthz (the process runs), /readyz (200
// while the process can serve, with the state of each dependency in its body; 503 once
// shutdown has begun), /metrics and, when asked for, pprof.
func Admin(o AdminOptions) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		rd := o.Ready(r.Context())
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if rd.Status != StatusReady {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		// The checks name dependencies and their state, never an address, credential or
		// error text.
		_ = json.NewEncoder(w).Encode(rd)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{}))
	if o.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// NewServer returns an http.Server with timeouts that protect against slow clients while
// leaving room for a 25 MB multipart upload on a slow link.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// Listener is a listener and the server that serves it.
type Listener struct {
	// Name names the listener in errors ("public", "admin").
	Name   string
	Net    net.Listener
	Server *http.Server
}

// Shutdown says how Serve stops once its context is done.
type Shutdown struct {
	// Drain is how long every listener goes on accepting and serving after the context is
	// done, so that load balancers that have seen readiness turn off stop sending
	// requests before the listeners close.
	Drain time.Duration
	// Timeout bounds the wait for requests in flight once the listeners close, for all
	// servers together.
	Timeout time.Duration
}

// Serve runs each server on its listener until ctx is done or one of them fails. After
// ctx is done, every server goes on accepting and serving for stop.Drain (a failing
// server cuts this short); its responses then carry "Connection: close", so that
// keep-alive clients reconnect (through the load balancer, to another replica) and no
// idle connection is left for the shutdown to close under a client that is just reusing
// it. Then the servers shut down one after the other, in the order given: each closes
// its listener and waits for its requests in flight before the next one begins, so that
// the admin listener (given last) answers /readyz and /metrics until the public one has
// finished. A server whose requests are still running when stop.Timeout is up has its
// connections closed, and Serve returns that error. Serve wraps the servers' handlers,
// so it must be given servers that are not running yet.
func Serve(ctx context.Context, stop Shutdown, listeners ...Listener) error {
	var draining atomic.Bool
	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		h := l.Server.Handler
		if h == nil {
			h = http.DefaultServeMux
		}
		l.Server.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if draining.Load() {
				w.Header().Set("Connection", "close")
			}
			h.ServeHTTP(w, r)
		})
		go func() {
			if err := l.Server.Serve(l.Net); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s listener: %w", l.Name, err)
			}
		}()
	}
	var err error
	select {
	case <-ctx.Done():
		draining.Store(true)
		drain := time.NewTimer(stop.Drain)
		select {
		case <-drain.C:
		case err = <-errc:
			drain.Stop()
		}
	case err = <-errc:
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stop.Timeout)
	defer cancel()
	for _, l := range listeners {
		if e := l.Server.Shutdown(shutCtx); e != nil {
			// Requests still running past the deadline would outlive the stores they use.
			_ = l.Server.Close()
			if err == nil {
				err = fmt.Errorf("shut down %s listener: %w", l.Name, e)
			}
		}
	}
	return err
}
