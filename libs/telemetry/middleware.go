package telemetry

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// scope names this package as the instrumentation that starts the server spans.
const scope = "github.com/sharenote/sharenote/libs/telemetry"

// Tracing starts a server span for every request, named "METHOD route" and continuing
// the caller's W3C trace context, and puts it in the request's context, so that the
// queries' spans are its children and the request's log lines carry its trace id. It
// records no metrics: HTTPMetrics does. clientIP tells the span's client address.
//
// With the no-op provider (tracing off, the default) no span is started: a request that
// carries a traceparent header still gets the caller's trace in its context, so that its
// log lines name that trace, and any other request passes untouched, at no cost.
func Tracing(tp trace.TracerProvider, clientIP func(*http.Request) string) gin.HandlerFunc {
	if _, off := tp.(noop.TracerProvider); off {
		return func(c *gin.Context) {
			if len(c.Request.Header["Traceparent"]) > 0 {
				c.Request = c.Request.WithContext(Propagator.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header)))
			}
			c.Next()
		}
	}
	tracer := tp.Tracer(scope)
	return func(c *gin.Context) {
		ctx := Propagator.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
		route, method := Route(c), methodLabel(c.Request.Method)
		ctx, span := tracer.Start(ctx, method+" "+route, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
			semconv.HTTPRequestMethodKey.String(method), semconv.HTTPRoute(route), semconv.URLPath(c.Request.URL.Path),
			semconv.ClientAddress(clientIP(c.Request))))
		defer span.End()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
		status := c.Writer.Status()
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		// A client's mistake (4xx) is not the server span's error (OpenTelemetry's HTTP
		// conventions); a 5xx is, with the causes the handlers recorded.
		if status >= 500 {
			span.SetStatus(codes.Error, "")
			for _, err := range c.Errors {
				span.RecordError(err.Err)
			}
		}
	}
}
