package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/sharenote/sharenote/libs/errs"
)

// RequireJSON checks that the request declares an application/json body.
func RequireJSON(c *gin.Context) error {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || mt != "application/json" {
		return errs.New(http.StatusBadRequest, errs.UnsupportedContentType, "The body must be JSON with Content-Type: application/json.")
	}
	return nil
}

// DecodeJSON reads the whole (already size-limited) body as one JSON value into dst.
// Errors carry the codes of docs/api.md "Errors": 413 over the limit, invalid_body for
// JSON that does not parse, invalid_field for a value of the wrong type.
func DecodeJSON(c *gin.Context, dst any) error {
	if err := RequireJSON(c); err != nil {
		return err
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return ReadError(err)
	}
	return UnmarshalJSON(body, dst)
}

// ReadBody reads the body under limit, a narrower limit than its route's (a JSON body
// on a route that also takes multipart ones): 413 when it is larger.
func ReadBody(c *gin.Context, limit int64) ([]byte, error) {
	if c.Request.ContentLength > limit {
		return nil, TooLarge(limit)
	}
	b, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		return nil, ReadError(err)
	}
	return b, nil
}

// UnmarshalJSON decodes exactly one JSON value from body into dst with the error codes of
// DecodeJSON.
func UnmarshalJSON(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return errs.Newf(http.StatusBadRequest, errs.InvalidField, "Field %q must be of type %s.", te.Field, jsonType(te.Type.Kind().String()))
		}
		return errs.New(http.StatusBadRequest, errs.InvalidBody, "The body is not valid JSON.")
	}
	if dec.More() {
		return errs.New(http.StatusBadRequest, errs.InvalidBody, "The body must hold exactly one JSON value.")
	}
	return nil
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "map", "struct":
		return "object"
	case "slice", "array":
		return "array"
	case "float32", "float64":
		return "number"
	default:
		return "integer"
	}
}
