package errs

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
)

// Abort records err on the gin context and stops the handler chain; Middleware renders it.
func Abort(c *gin.Context, err error) {
	_ = c.Error(err)
	c.Abort()
}

// StatusClientClosedRequest is the status recorded (nginx's convention) for a request
// its client abandoned: nobody reads the answer, and nothing failed on our side.
const StatusClientClosedRequest = 499

// Middleware renders the last error recorded on the context as the JSON error body. It is
// the only place an error becomes a response: 5xx causes are logged here, once, and the
// client sees only the generic message. A request whose client hung up is recorded as
// 499 and not logged as an error. translate turns the domain's errors into *Error (As).
func Middleware(log *slog.Logger, translate Translator) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Next()
		if len(c.Errors) == 0 || c.Writer.Written() {
			return
		}
		err := c.Errors.Last().Err
		if errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil {
			c.AbortWithStatus(StatusClientClosedRequest)
			return
		}
		e := As(err, translate)
		if e.Status >= http.StatusInternalServerError {
			log.ErrorContext(c.Request.Context(), "request failed", "err", e, "route", c.FullPath())
			if e.Status == http.StatusServiceUnavailable {
				c.Header("Retry-After", "5")
			}
		}
		c.AbortWithStatusJSON(e.Status, Body{Error: e.Code, Message: e.Message, Cuid: e.Cuid})
	}
}
