package httpx_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/logging"
)

// BenchmarkAccessLog is the cost of one request's access log line, through the logger
// every process uses (JSON, request id), written to a batching Writer in front of
// io.Discard.
func BenchmarkAccessLog(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	w := logging.NewWriter(io.Discard, logging.DefaultBuffer)
	defer func() { _ = w.Close(context.Background()) }()
	for _, on := range []bool{false, true} {
		name := "without"
		if on {
			name = "with"
		}
		b.Run(name, func(b *testing.B) {
			r := gin.New()
			r.Use(httpx.RequestID())
			if on {
				r.Use(httpx.AccessLog(logging.New(w, slog.LevelInfo, "bench"), httpx.NewClientIPs(nil)))
			}
			r.GET("/api/images/:a/:b/:name", func(c *gin.Context) { c.Status(http.StatusOK) })
			req := httptest.NewRequest("GET", "/api/images/acct/note/cat.png", nil)
			req.Header.Set("X-Request-ID", "abc-123")
			rec := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				r.ServeHTTP(rec, req)
			}
		})
	}
}
