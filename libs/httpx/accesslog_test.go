package httpx_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/telemetry"
)

// TestAccessLogLineNamesTheRequestAndItsTraceOnce reads the line of a request that came
// with an id and a caller's trace: both are named, once each, beside the request's fields.
func TestAccessLogLineNamesTheRequestAndItsTraceOnce(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	var buf bytes.Buffer
	r := gin.New()
	ips := httpx.NewClientIPs(nil)
	r.Use(httpx.RequestID(), telemetry.Tracing(noop.NewTracerProvider(), ips.Of), httpx.AccessLog(logging.New(&buf, slog.LevelInfo, "test"), ips))
	r.GET("/notes/:id", func(c *gin.Context) { c.String(http.StatusOK, "hello") })
	req := httptest.NewRequest(http.MethodGet, "/notes/abc", nil)
	req.RemoteAddr = "198.51.100.7:5000"
	req.Header.Set("X-Request-ID", "req-1")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	r.ServeHTTP(httptest.NewRecorder(), req)

	line := strings.TrimSpace(buf.String())
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("not one JSON line: %q", line)
	}
	want := map[string]any{"msg": "request", "service": "test", "method": "GET", "route": "/notes/:id", "path": "/notes/abc",
		"status": 200.0, "bytes": 5.0, "ip": "198.51.100.7", "request_id": "req-1", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("%s = %v, want %v", k, rec[k], v)
		}
	}
	for _, k := range []string{"request_id", "trace_id"} {
		if n := strings.Count(line, `"`+k+`"`); n != 1 {
			t.Errorf("%s is named %d times: %s", k, n, line)
		}
	}
}
