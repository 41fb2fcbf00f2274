package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"

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

// DecodeJSON reads the whole (already size-limited) body as one JSON value into dst, by
// UnmarshalJSON's rules. Errors carry the codes of docs/api.md "Errors": 413 over the
// limit, invalid_body for JSON that does not parse, invalid_field for a field's fault.
func DecodeJSON(c *gin.Context, dst any) error { return decode(c, dst, false) }

// DecodeJSONStrict is DecodeJSON for a body whose every member must be a field of dst's
// struct: a member it does not name is invalid_field too (the settings, where a misspelt
// field would silently change nothing).
func DecodeJSONStrict(c *gin.Context, dst any) error { return decode(c, dst, true) }

func decode(c *gin.Context, dst any, strict bool) error {
	if err := RequireJSON(c); err != nil {
		return err
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return ReadError(err)
	}
	return unmarshal(body, dst, strict)
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
// DecodeJSON. json.Unmarshal reads the body in place; a body it refuses is read again, by
// a Decoder, to tell a second value after the first from JSON that does not parse.
//
// Into a struct (a request type of libs/wire), the body is read once more for its members
// (each copied once) and held to what the OpenAPI document says of that type, which
// libs/wire's schema test derives from the same struct tags: a field the encoder always
// writes (no omitempty or omitzero) is required, and null is a value only of a field whose
// Go type gives it a meaning (a map, a slice, or a type that reads JSON itself, as
// wire.Optional does). Either fault is invalid_field naming the field; the fields are
// checked in the struct's order, so the one reported does not depend on the order the
// client sent. Members the struct does not name are ignored.
func UnmarshalJSON(body []byte, dst any) error {
	return unmarshal(body, dst, false)
}

func unmarshal(body []byte, dst any, strict bool) error {
	err := json.Unmarshal(body, dst)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return checkMembers(body, reflect.TypeOf(dst).Elem(), strict)
	case errors.As(err, &te) && te.Field != "":
		return FieldError(te.Field, "must be of type "+jsonType(te.Type.Kind().String()))
	case oneValueThenMore(body):
		return errs.New(http.StatusBadRequest, errs.InvalidBody, "The body must hold exactly one JSON value.")
	default:
		return errs.New(http.StatusBadRequest, errs.InvalidBody, "The body is not valid JSON.")
	}
}

// FieldError is the invalid_field error of a body's member name: "Field name reason.".
func FieldError(name, reason string) *errs.Error {
	e := errs.Newf(http.StatusBadRequest, errs.InvalidField, "Field %q %s.", name, reason)
	e.Field = name
	return e
}

// checkMembers holds a body already decoded into a value of type t to the rules of
// UnmarshalJSON (and, when strict, DecodeJSONStrict); nothing for a t that is not a
// struct.
func checkMembers(body []byte, t reflect.Type, strict bool) error {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil || members == nil {
		return errs.New(http.StatusBadRequest, errs.InvalidBody, "The body must be a JSON object.")
	}
	known := make(map[string]bool, t.NumField())
	for _, f := range reflect.VisibleFields(t) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || f.Anonymous || name == "" || name == "-" {
			continue
		}
		known[name] = true
		raw, sent := members[name]
		switch {
		case !sent && !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero"):
			return FieldError(name, "is required")
		case sent && string(raw) == "null" && !nullable(f.Type):
			return FieldError(name, "cannot be null")
		}
	}
	if strict {
		for _, name := range slices.Sorted(maps.Keys(members)) {
			if !known[name] {
				return FieldError(name, "is not a field of this body")
			}
		}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// nullable reports whether null means something to a field of type t: a map or a slice
// (none), or a type that reads JSON itself and so decides.
func nullable(t reflect.Type) bool {
	return t.Kind() == reflect.Map || t.Kind() == reflect.Slice || reflect.PointerTo(t).Implements(unmarshalerType)
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
