// Package noteapi is the HTTP edge of the note domain shared by the publish, notes, images
// and og-renderer services: the parsing of request fields that more than one service
// accepts, the public URLs of publications, and the cached public reads. The domain's
// errors pass through it unchanged; errs translates them.
package noteapi

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/wire"
)

// InvalidField is a 400 invalid_field.
func InvalidField(message string) *errs.Error {
	return errs.New(http.StatusBadRequest, errs.InvalidField, message)
}

// Query returns the values of the known parameters of a request's query string (its
// RawQuery), per docs/api.md "Errors": a query string that is not valid percent-encoding
// is 400 with the code of the parameter whose pair is malformed (invalid_cursor,
// invalid_limit, else invalid_field), as is a known parameter given more than once;
// unknown parameters are ignored, because shared links carry utm_* and fbclid. gin's
// c.Query drops a malformed query string silently and would answer as if no parameter had
// been given.
//
// The pairs are parsed one at a time, so that the error names the parameter at fault.
func Query(rawQuery string, known ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(rawQuery, "&") {
		if pair == "" {
			continue
		}
		values, err := url.ParseQuery(pair)
		if err != nil {
			rawKey, _, _ := strings.Cut(pair, "=")
			key, kerr := url.QueryUnescape(rawKey)
			if kerr != nil || !slices.Contains(known, key) {
				return nil, errs.New(http.StatusBadRequest, errs.InvalidField, "The query string is not valid percent-encoding.")
			}
			return nil, errs.Newf(http.StatusBadRequest, queryCode(key), "The query parameter %s is not valid percent-encoding.", key)
		}
		for key, vs := range values {
			if !slices.Contains(known, key) {
				continue
			}
			if _, dup := out[key]; dup || len(vs) > 1 {
				return nil, errs.Newf(http.StatusBadRequest, queryCode(key), "The query parameter %s is given more than once.", key)
			}
			out[key] = vs[0]
		}
	}
	return out, nil
}

// queryCode is the error code of a bad value of the query parameter key.
func queryCode(key string) string {
	switch key {
	case "cursor":
		return errs.InvalidCursor
	case "limit":
		return errs.InvalidLimit
	default:
		return errs.InvalidField
	}
}

// Ref names a publication in a response: its cuid and the URL of its page under
// publicURL ({base_url}).
func Ref(publicURL, cuid string) wire.Ref {
	return wire.Ref{Cuid: cuid, URL: routes.NotePage.URL(publicURL, cuid)}
}

// Warnings returns the response's warnings array: empty, never null, when there are none.
func Warnings(ws []note.Warning) []wire.Warning {
	out := make([]wire.Warning, len(ws))
	for i, w := range ws {
		out[i] = wire.Warning{Code: w.Code, Message: w.Message, Ref: w.Ref}
	}
	return out
}

// AnswerWrite answers an owner's write of publication p (publish, update): err when
// there is one, else body(p) with p's etag in the ETag header, never cached.
func AnswerWrite[T any](c *gin.Context, p note.Publication, err error, body func(note.Publication) T) {
	if err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Header("ETag", `"`+p.ETag+`"`)
	c.JSON(http.StatusOK, body(p))
}
