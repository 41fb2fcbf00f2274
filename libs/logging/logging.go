// Package logging builds the JSON slog logger every process uses and carries the request
// id through contexts, so that each line written while serving a request names the request
// and its trace.
package logging

import (
	"context"
	"io"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id carried by ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// New returns a JSON logger writing to w at the given level, with service naming the
// process's role. Every record logged with a context gets request_id and trace_id.
func New(w io.Writer, level slog.Leveler, service string) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})
	return slog.New(contextHandler{h}).With("service", service)
}

// contextHandler adds the ids found in the record's context.
type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	var ids [2]slog.Attr
	r.AddAttrs(AppendIDs(ids[:0], ctx)...)
	return h.Handler.Handle(ctx, r)
}

// AppendIDs appends to attrs the ids ctx carries, request_id and trace_id, as the logger
// adds them to every record logged with ctx. A caller that puts them in its record itself
// (with one AddAttrs call where the logger would make a second) logs it with a context
// that carries none.
func AppendIDs(attrs []slog.Attr, ctx context.Context) []slog.Attr {
	if id := RequestID(ctx); id != "" {
		attrs = append(attrs, slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
	}
	return attrs
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}
