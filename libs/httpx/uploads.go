package httpx

import (
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/errs"
)

// LargeBody is the size over which a request body counts as an upload: a body of unknown
// length (chunked) counts too, since it may be as large as the route allows.
const LargeBody = 64 << 10

// Uploads caps how many large request bodies one process reads at the same time, so that
// the memory, temporary disk and database connections they take stay bounded however many
// clients upload at once. A request over the cap waits, before its body is read, for a
// slot to free up, in the order the requests came, for at most the wait given to
// NewUploads (SHARE_UPLOAD_WAIT); when none frees up by then it is refused with 503
// service_unavailable and Retry-After, and a client retries later. A burst of uploads
// thus queues instead of failing, while a process that stays busy still sheds them
// within a bound the ingress's proxy timeout leaves room for. Once shutdown begins
// (Stop) no request waits: those waiting are refused at once, and their clients retry on
// another replica.
type Uploads struct {
	slots    chan struct{}
	wait     time.Duration
	stop     chan struct{}
	stopOnce sync.Once
	inFlight prometheus.Gauge
	waiting  prometheus.Gauge
	refused  prometheus.Counter
	waited   prometheus.Histogram
}

// NewUploads returns a cap of n concurrent uploads (n ≥ 1), over which a request waits up
// to wait for a slot, whose metrics are registered on reg.
func NewUploads(n int, wait time.Duration, reg prometheus.Registerer) *Uploads {
	u := &Uploads{
		slots: make(chan struct{}, n),
		wait:  wait,
		stop:  make(chan struct{}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sharenote_uploads_in_flight",
			Help: "Requests with a large body being handled now (at most SHARE_MAX_UPLOADS)."}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sharenote_uploads_waiting",
			Help: "Requests with a large body waiting for one of the SHARE_MAX_UPLOADS slots (at most SHARE_UPLOAD_WAIT each)."}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "sharenote_uploads_refused_total",
			Help: "Requests with a large body refused with 503 because no SHARE_MAX_UPLOADS slot freed up within SHARE_UPLOAD_WAIT (or shutdown began)."}),
		waited: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sharenote_uploads_wait_seconds",
			Help:    "How long requests with a large body that found every slot taken waited, whether they got one or not.",
			Buckets: []float64{0.01, 0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 60}}),
	}
	reg.MustRegister(u.inFlight, u.waiting, u.refused, u.waited)
	return u
}

// Stop makes the requests waiting for a slot, and any that come later while every slot
// is taken, answer 503 at once: shutdown has begun.
func (u *Uploads) Stop() { u.stopOnce.Do(func() { close(u.stop) }) }

// Middleware holds a slot for the rest of the chain when the request's body is an upload
// (declared larger than LargeBody, or of unknown length); small bodies pass without one.
func (u *Uploads) Middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		if n := c.Request.ContentLength; n >= 0 && n <= LargeBody {
			c.Next()
			return
		}
		if !u.acquire(c) {
			u.refused.Inc()
			// The body will not be read: close the connection rather than drain it.
			dropBody(c)
			if c.Request.Context().Err() == nil {
				errs.Abort(c, errs.New(http.StatusServiceUnavailable, errs.ServiceUnavailable,
					"Too many uploads are in progress; retry after the time in Retry-After."))
			} else {
				errs.Abort(c, c.Request.Context().Err())
			}
			return
		}
		u.inFlight.Inc()
		defer func() {
			u.inFlight.Dec()
			<-u.slots
		}()
		c.Next()
	}
}

// acquire takes a slot, waiting up to u.wait; false when none freed up in time, shutdown
// began, or the client went away.
func (u *Uploads) acquire(c *gin.Context) bool {
	select {
	case u.slots <- struct{}{}:
		return true
	default:
	}
	start := time.Now()
	defer func() { u.waited.Observe(time.Since(start).Seconds()) }()
	select {
	case <-u.stop:
		return false
	default:
	}
	u.waiting.Inc()
	defer u.waiting.Dec()
	timer := time.NewTimer(u.wait)
	defer timer.Stop()
	select {
	case u.slots <- struct{}{}:
		return true
	case <-timer.C:
	case <-u.stop:
	case <-c.Request.Context().Done():
	}
	return false
}
