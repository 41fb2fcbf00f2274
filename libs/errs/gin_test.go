package errs_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
)

func TestAClientThatHangsUpIs499AndNoErrorLine(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	var logs bytes.Buffer
	e := gin.New()
	e.Use(errs.Middleware(slog.New(slog.NewJSONHandler(&logs, nil)), nil))
	e.GET("/", func(c *gin.Context) { errs.Abort(c, c.Request.Context().Err()) })

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // The client has gone.
	w := httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
	if w.Code != errs.StatusClientClosedRequest || logs.Len() != 0 {
		t.Errorf("status %d, log %q; want 499 and no log line", w.Code, logs.String())
	}

	// The same error while the client is still there is our failure: a 500, logged.
	e.GET("/ours", func(c *gin.Context) { errs.Abort(c, context.Canceled) })
	w = httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/ours", nil))
	if w.Code != http.StatusInternalServerError || !bytes.Contains(logs.Bytes(), []byte(`"level":"ERROR"`)) {
		t.Errorf("status %d, log %q; want a logged 500", w.Code, logs.String())
	}
}
