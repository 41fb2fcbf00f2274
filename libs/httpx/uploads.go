package httpx

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/errs"
)

// LargeBody is the size over which a request body counts as an upload: a body of unknown
// length (chunked) counts too, since it may be as large as the route allows.
const LargeBody = 64 << 10

// Uploads caps how many large request bodies one process reads at the same time, so that
// the memory, temporary disk and database connections they take stay bounded however many
// clients upload at once. A request over the cap is refused at once, before its body is
// read, with 503 service_unavailable and Retry-After: a client retries later instead of
// queueing on a process that is already busy.
type Uploads struct {
	slots    chan struct{}
	inFlight prometheus.Gauge
	refused  prometheus.Counter
}

// NewUploads returns a cap of n concurrent uploads (n ≥ 1) whose metrics are registered
// on reg.
func NewUploads(n int, reg prometheus.Registerer) *Uploads {
	u := &Uploads{
		slots: make(chan struct{}, n),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sharenote_uploads_in_flight",
			Help: "Requests with a large body being handled now (at most SHARE_MAX_UPLOADS)."}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "sharenote_uploads_refused_total",
			Help: "Requests with a large body refused with 503 because SHARE_MAX_UPLOADS were in flight."}),
	}
	reg.MustRegister(u.inFlight, u.refused)
	return u
}

// Middleware holds a slot for the rest of the chain when the request's body is an upload
// (declared larger than LargeBody, or of unknown length); small bodies pass without one.
func (u *Uploads) Middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		if n := c.Request.ContentLength; n >= 0 && n <= LargeBody {
			c.Next()
			return
		}
		select {
		case u.slots <- struct{}{}:
		default:
			u.refused.Inc()
			// The body will not be read: close the connection rather than drain it.
			dropBody(c)
			errs.Abort(c, errs.New(http.StatusServiceUnavailable, errs.ServiceUnavailable,
				"Too many uploads are in progress; retry after the time in Retry-After."))
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
