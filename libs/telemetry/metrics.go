// Package telemetry holds the service's Prometheus metrics and OpenTelemetry tracing.
// Everything registers on an injected prometheus.Registerer and uses an injected tracer
// provider: no global registry, so that the all-in-one process and tests can build any
// number of services side by side.
package telemetry

import (
	"database/sql"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// HTTPMetrics counts requests and observes their latency by route, method and status. It
// is the one metrics middleware of the HTTP chain.
type HTTPMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	// series holds each label combination's counter and histogram once looked up, so that
	// a request costs a map read instead of hashing and checking three label values twice.
	// The combinations are bounded: routes of the table, standard methods, statuses.
	mu     sync.RWMutex
	series map[seriesKey]series
}

type seriesKey struct {
	route, method string
	status        int
}

type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// NewHTTPMetrics registers the HTTP metrics on reg.
func NewHTTPMetrics(reg prometheus.Registerer) *HTTPMetrics {
	labels := []string{"route", "method", "status"}
	m := &HTTPMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sharenote_http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status.",
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sharenote_http_request_duration_seconds",
			Help:    "HTTP request latency, by route pattern, method and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, labels),
		series: map[seriesKey]series{},
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// Middleware observes every request. Unmatched paths share the route label "unmatched",
// and methods outside the standard set share the method label "OTHER", so that scanners
// cannot blow up the label cardinality.
func (m *HTTPMetrics) Middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		s := m.of(seriesKey{Route(c), methodLabel(c.Request.Method), c.Writer.Status()})
		s.requests.Inc()
		s.duration.Observe(time.Since(start).Seconds())
	}
}

// of returns the series of k, looking them up in the vectors the first time.
func (m *HTTPMetrics) of(k seriesKey) series {
	m.mu.RLock()
	s, ok := m.series[k]
	m.mu.RUnlock()
	if ok {
		return s
	}
	status := strconv.Itoa(k.status)
	s = series{m.requests.WithLabelValues(k.route, k.method, status), m.duration.WithLabelValues(k.route, k.method, status)}
	m.mu.Lock()
	m.series[k] = s
	m.mu.Unlock()
	return s
}

// Route names the request's route for metrics and logs: its pattern in the routes table,
// or "unmatched" for a path no route matches (never the path itself, which a client
// chooses).
func Route(c *gin.Context) string {
	if route := c.FullPath(); route != "" {
		return route
	}
	return "unmatched"
}

// methodLabel returns method if it is one of the standard methods the API may answer, and
// "OTHER" for any other token a client sends, which would otherwise become a label value
// (and a set of series) of its own.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return method
	}
	return "OTHER"
}

// RegisterDBStats exports the connection pool gauges (open, in use, idle, waits) of db.
func RegisterDBStats(reg prometheus.Registerer, db *sql.DB) {
	reg.MustRegister(collectors.NewDBStatsCollector(db, "sharenote"))
}
