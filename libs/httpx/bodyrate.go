package httpx

import (
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
)

// The minimum transfer rate of request bodies. A body must keep arriving at MinBodyRate
// or faster: it starts with BodyRateWindow of credit, every MinBodyRate bytes received
// earn one more second, and the credit never exceeds BodyRateWindow, so that a fast
// start cannot pay for a long stall. Credit is spent only while the handler waits for
// bytes that have not arrived, never while the handler itself is busy. A body whose credit
// runs out is cut with 408 request_timeout: a client that sends nothing is cut after
// 10 seconds, one that trickles a few bytes a second after little more, and one that
// sends at half the minimum rate after about 20 seconds, far inside the server's
// five-minute ReadTimeout, which still bounds every body.
const (
	// MinBodyRate is the slowest rate, in bytes per second, at which a request body may
	// arrive: 64 kbit/s, the speed of a poor mobile link.
	MinBodyRate = 8 << 10
	// BodyRateWindow is the credit a body starts with and the most it can bank.
	BodyRateWindow = 10 * time.Second
)

// ErrBodyTooSlow is returned by the reads of a request body whose credit ran out.
var ErrBodyTooSlow = errors.New("the request body arrived below the minimum rate")

// TooSlow is the 408 request_timeout for a body that arrived below the minimum rate.
func TooSlow() *errs.Error {
	return errs.New(http.StatusRequestTimeout, errs.RequestTimeout,
		"The request body arrived below the minimum transfer rate; send it again over a faster connection.")
}

// rateBody enforces a minimum transfer rate on a request body with the connection's read
// deadline (http.ResponseController.SetReadDeadline): before each read the deadline is
// set to now plus the credit left, so a read that waits longer fails with a timeout.
// Reads from one goroutine only, as a request body is.
type rateBody struct {
	body   io.ReadCloser
	rc     *http.ResponseController
	rate   float64
	window time.Duration
	// limit is the latest deadline ever set: the server's own ReadTimeout counted from
	// when the body began, restored once the body has been read. Zero means none.
	limit time.Time
	// credit is how long reads may still wait for bytes.
	credit time.Duration
	// started: the handler read from the body; eof: the body ended; slow: its credit ran
	// out.
	started, eof, slow bool
}

// newRateBody wraps r's body. When the connection cannot take a read deadline (a
// ResponseWriter that does not unwrap to net/http's), the wrapper only passes reads
// through, and the server's ReadTimeout alone bounds the body.
func newRateBody(w http.ResponseWriter, r *http.Request, rate int64, window time.Duration) *rateBody {
	b := &rateBody{body: r.Body, rc: http.NewResponseController(w), rate: float64(rate), window: window, credit: window}
	now := time.Now()
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.ReadTimeout > 0 {
		b.limit = now.Add(srv.ReadTimeout)
	}
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		// Without a body the server already reads the connection in the background to
		// notice a client that hangs up; a deadline would cut that read short.
		b.eof = true
		return b
	}
	// A first deadline before any read bounds what a handler that never reads the body
	// leaves behind: net/http discards up to 256 KiB of it before answering, and a
	// trickling client must not hold that for the whole ReadTimeout.
	if !b.setDeadline(now.Add(window)) {
		b.eof = true
	}
	return b
}

// setDeadline sets the connection's read deadline, never past limit; false when the
// connection does not support deadlines.
func (b *rateBody) setDeadline(t time.Time) bool {
	if !b.limit.IsZero() && (t.IsZero() || t.After(b.limit)) {
		t = b.limit
	}
	return b.rc.SetReadDeadline(t) == nil
}

func (b *rateBody) Read(p []byte) (int, error) {
	if b.slow {
		return 0, ErrBodyTooSlow
	}
	if b.eof {
		return b.body.Read(p)
	}
	b.started = true
	start := time.Now()
	b.setDeadline(start.Add(b.credit))
	n, err := b.body.Read(p)
	b.credit -= time.Since(start)
	b.credit = max(0, min(b.window, b.credit+time.Duration(float64(n)/b.rate*float64(time.Second))))
	switch {
	case err == io.EOF: //nolint:errorlint // Read returns io.EOF itself, unwrapped.
		b.eof = true
		// The body is done: the server's own deadline applies again, so that its
		// background read (which notices a client hanging up) is not cut short.
		b.setDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.slow = true
		return n, ErrBodyTooSlow
	}
	return n, err
}

func (b *rateBody) Close() error { return b.body.Close() }

// dropBody makes the connection end with the answer when the handler leaves the rest of
// the body unread. It tells net/http's ResponseWriter that the body is over its limit
// (through MaxBytesReader, the one public way to say so): net/http then answers with
// Connection: close without first reading the rest, and closes gracefully afterwards:
// it sends FIN and waits half a second before the close, so that a client still sending
// reads the answer rather than a reset. The read deadline passes at once, so that
// net/http does not read what is left of the body before that either.
func dropBody(c *gin.Context) {
	c.Header("Connection", "close")
	_, _ = http.MaxBytesReader(netHTTPWriter(c.Writer), io.NopCloser(strings.NewReader("x")), 0).Read(make([]byte, 1))
	if c.Request.ContentLength != 0 {
		// A request without a body is not read again, and its connection is read in the
		// background to notice a client that hangs up; only a body is cut short here.
		_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now())
	}
}

// netHTTPWriter unwraps w (gin's writer) to the ResponseWriter net/http made, which
// MaxBytesReader can tell that a body is over its limit.
func netHTTPWriter(w http.ResponseWriter) http.ResponseWriter {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}
