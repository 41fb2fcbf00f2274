package telemetry_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/telemetry"
)

const (
	callerTrace     = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerParent    = "00-" + callerTrace + "-00f067aa0ba902b7-01"
	callerParentHex = "00f067aa0ba902b7"
)

// traced serves /notes/:id (200) and /boom (500 with a recorded cause) behind Tracing(tp)
// and reports the span context each handler saw.
func traced(tp trace.TracerProvider, seen *trace.SpanContext) *gin.Engine {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	r.Use(telemetry.Tracing(tp, httpx.NewClientIPs(nil).Of))
	r.GET("/notes/:id", func(c *gin.Context) {
		*seen = trace.SpanContextFromContext(c.Request.Context())
		c.Status(http.StatusOK)
	})
	r.GET("/boom", func(c *gin.Context) {
		_ = c.Error(errors.New("database gone"))
		c.Status(http.StatusInternalServerError)
	})
	return r
}

func get(r http.Handler, path, traceparent string) {
	req := httptest.NewRequest("GET", path, nil)
	if traceparent != "" {
		req.Header.Set("traceparent", traceparent)
	}
	r.ServeHTTP(httptest.NewRecorder(), req)
}

func TestTracingStartsAServerSpanPerRequestUnderTheCallersTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var seen trace.SpanContext
	r := traced(tp, &seen)
	get(r, "/notes/abc", callerParent)
	get(r, "/boom", "")

	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	read := spans[0]
	if read.Name() != "GET /notes/:id" || read.SpanKind() != trace.SpanKindServer {
		t.Errorf("span %q of kind %v", read.Name(), read.SpanKind())
	}
	if read.SpanContext().TraceID().String() != callerTrace || read.Parent().SpanID().String() != callerParentHex {
		t.Errorf("span in trace %s under %s, want the caller's", read.SpanContext().TraceID(), read.Parent().SpanID())
	}
	if seen.SpanID() != read.SpanContext().SpanID() {
		t.Errorf("the handler saw span %s, not the request's %s", seen.SpanID(), read.SpanContext().SpanID())
	}
	attrs := attribute.NewSet(read.Attributes()...)
	for k, want := range map[attribute.Key]string{"http.route": "/notes/:id", "url.path": "/notes/abc", "http.request.method": "GET"} {
		if v, _ := attrs.Value(k); v.AsString() != want {
			t.Errorf("%s = %q, want %q", k, v.AsString(), want)
		}
	}
	if v, _ := attrs.Value("http.response.status_code"); v.AsInt64() != 200 || read.Status().Code == codes.Error {
		t.Errorf("status attribute %v, span status %v", v.AsInt64(), read.Status())
	}
	boom := spans[1]
	if boom.Status().Code != codes.Error || len(boom.Events()) != 1 || boom.Parent().IsValid() {
		t.Errorf("a 500: status %v, %d events, parent %v", boom.Status(), len(boom.Events()), boom.Parent())
	}
}

func TestTracingOffKeepsOnlyTheCallersTraceID(t *testing.T) {
	var seen trace.SpanContext
	r := traced(noop.NewTracerProvider(), &seen)
	get(r, "/notes/abc", callerParent)
	if seen.TraceID().String() != callerTrace {
		t.Errorf("with tracing off, a request with a traceparent has trace %s in its context, want the caller's", seen.TraceID())
	}
	get(r, "/notes/abc", "")
	if seen.IsValid() {
		t.Errorf("with tracing off, a request without a traceparent has span context %v", seen)
	}
}

// allocsPerRequest returns the allocations of one GET of a route served by a gin engine
// with the middleware hs, and with none: the difference is what hs allocate per request.
func allocsPerRequest(hs ...gin.HandlerFunc) (with, without float64) {
	gin.SetMode(gin.TestMode)
	measure := func(hs ...gin.HandlerFunc) float64 {
		r := gin.New()
		r.Use(hs...)
		r.GET("/notes/:id", func(c *gin.Context) { c.Status(http.StatusNoContent) })
		req := httptest.NewRequest("GET", "/notes/abc", nil)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req) // The first request of a route may set up what later ones reuse.
		return testing.AllocsPerRun(200, func() { r.ServeHTTP(w, req) })
	}
	return measure(hs...), measure()
}

func TestTracingOffAllocatesNothing(t *testing.T) {
	if with, without := allocsPerRequest(telemetry.Tracing(noop.NewTracerProvider(), httpx.NewClientIPs(nil).Of)); with != without {
		t.Errorf("with tracing off, a request allocates %v times, %v without the middleware", with, without)
	}
}
