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
	// A declared length sizes the buffer once (with room to read the end without growing).
	var b bytes.Buffer
	b.Grow(int(max(c.Request.ContentLength, 0)) + bytes.MinRead)
	if _, err := b.ReadFrom(http.MaxBytesReader(c.Writer, c.Request.Body, limit)); err != nil {
		return nil, ReadError(err)
	}
	return b.Bytes(), nil
}

// UnmarshalJSON decodes exactly one JSON value from body into dst with the error codes of
// DecodeJSON. json.Unmarshal reads the body in place; only a body it refuses is read again,
// by a Decoder, to tell a second value after the first from JSON that does not parse.
func UnmarshalJSON(body []byte, dst any) error {
	err := json.Unmarshal(body, dst)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return errs.Newf(http.StatusBadRequest, errs.InvalidField, "Field %q must be of type %s.", te.Field, jsonType(te.Type.Kind().String()))
	case oneValueThenMore(body):
		return errs.New(http.StatusBadRequest, errs.InvalidBody, "The body must hold exactly one JSON value.")
	default:
		return errs.New(http.StatusBadRequest, errs.InvalidBody, "The body is not valid JSON.")
	}
}

// oneValueThenMore reports whether body starts with a whole JSON value and goes on after it.
func oneValueThenMore(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	var first json.RawMessage
	return dec.Decode(&first) == nil && dec.InputOffset() < int64(len(bytes.TrimRight(body, " \t\r\n")))
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
