// Package httpx holds the HTTP plumbing every target shares: request ids, access logs,
// panic recovery, body limits, JSON decoding with the error codes of docs/api.md "Errors",
// and the listeners with graceful shutdown.
package httpx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/telemetry"
)

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-ID"

// RequestID takes a well-formed incoming X-Request-ID (from the ingress) or makes one,
// echoes it in the response and puts it in the request context for the logger. Every
// response also says X-Content-Type-Options: nosniff, so that no browser reads a body as
// another media type than the one it is sent with.
func RequestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		var id string
		if v := c.Request.Header[requestIDKey]; len(v) > 0 {
			id = v[0]
		}
		if !validRequestID(id) {
			id = newRequestID()
		}
		// Set under their canonical names, with no canonicalization per request; nosniff is
		// one slice shared by every response, which net/http only reads (a handler that
		// changes the header replaces the slice).
		h := c.Writer.Header()
		h["X-Content-Type-Options"] = nosniff
		h[requestIDKey] = []string{id}
		c.Request = c.Request.WithContext(logging.WithRequestID(c.Request.Context(), id))
		c.Next()
	}
}

var (
	nosniff      = []string{"nosniff"}
	requestIDKey = http.CanonicalHeaderKey(RequestIDHeader)
)

// newRequestID returns 96 random bits in hex.
func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	var out [24]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// AccessLog writes one JSON line per request: method, route, path, status, bytes,
// duration_us and ip (the client's, as ips tells it). It logs the path but never the
// query, headers or body, so neither a token nor a license key can reach the log. The
// line is made as cheaply as slog allows, since every request pays for it: a record
// without the caller's program counter (the handler prints no source), its attributes
// and the request's ids added at once (a record holds five inline and grows a slice for
// the rest, once a call), the request's end time read once, and the duration in whole
// microseconds (slog writes a float through encoding/json).
func AccessLog(log *slog.Logger, ips ClientIPs) gin.HandlerFunc {
	h := log.Handler()
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		ctx := c.Request.Context()
		if !h.Enabled(ctx, slog.LevelInfo) {
			return
		}
		end := time.Now()
		r := slog.NewRecord(end, slog.LevelInfo, "request", 0)
		var attrs [9]slog.Attr
		r.AddAttrs(logging.AppendIDs(append(attrs[:0],
			slog.String("method", c.Request.Method),
			slog.String("route", telemetry.Route(c)),
			slog.String("path", c.Request.URL.Path),
			slog.Int("status", c.Writer.Status()),
			slog.Int("bytes", max(c.Writer.Size(), 0)),
			slog.Int64("duration_us", end.Sub(start).Microseconds()),
			slog.String("ip", ips.Of(c.Request)),
		), ctx)...)
		_ = h.Handle(context.Background(), r) // The record names the request's ids already.
	}
}

// Recovery turns a panic into a 500 internal_error whose cause (with the stack) is logged
// by errs.Middleware and never sent to the client.
func Recovery() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			if r == http.ErrAbortHandler { //nolint:errorlint // Sentinel compared as net/http does.
				panic(r)
			}
			errs.Abort(c, errs.Internal(fmt.Errorf("panic: %v\n%s", r, debug.Stack())))
		}()
		c.Next()
	}
}

// BodyLimit caps the request body at n bytes: a declared Content-Length over n is refused
// at once, and a body that grows past n fails while being read, so no handler ever
// buffers more than n bytes. It also holds the body to the minimum transfer rate
// (MinBodyRate, BodyRateWindow): a body that arrives slower is cut and answered with
// 408 request_timeout, whatever error the handler made of the failed read.
func BodyLimit(n int64) gin.HandlerFunc {
	return BodyLimitRate(n, MinBodyRate, BodyRateWindow)
}

// BodyLimitRate is BodyLimit with another minimum rate, in bytes per second, and window;
// tests use it to see the cut in milliseconds.
func BodyLimitRate(n, rate int64, window time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > n {
			errs.Abort(c, TooLarge(n))
			return
		}
		body := newRateBody(c.Writer, c.Request, rate, window)
		// net/http's own writer, not gin's: over the limit, MaxBytesReader tells it to
		// close the connection gracefully after answering instead of reading the rest.
		c.Request.Body = http.MaxBytesReader(netHTTPWriter(c.Writer), body, n)
		c.Next()
		switch {
		case body.slow:
			// The rest of the body is not worth waiting for; a client still trickling it
			// reads the answer before the connection closes.
			dropBody(c)
			if !c.Writer.Written() {
				errs.Abort(c, TooSlow())
			}
		case body.started && !body.eof && len(c.Errors) > 0:
			// The handler refused the request part-way through its body (too large, too
			// many images): answer at once and drop the connection instead of reading
			// the rest.
			dropBody(c)
		}
	}
}

// TooLarge is the 413 payload_too_large for a request body over n bytes.
func TooLarge(n int64) *errs.Error {
	return errs.Newf(http.StatusRequestEntityTooLarge, errs.PayloadTooLarge, "The request body is larger than %d bytes.", n)
}

// ReadError translates an error met while reading a request body: over the limit is 413,
// below the minimum rate 408, anything else is the client's broken body.
func ReadError(err error) *errs.Error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return TooLarge(mbe.Limit)
	}
	if errors.Is(err, ErrBodyTooSlow) {
		return TooSlow()
	}
	return errs.New(http.StatusBadRequest, errs.InvalidBody, "The request body could not be read.")
}
