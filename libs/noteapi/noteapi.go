// Package noteapi is the HTTP edge of the note domain shared by the publish, notes, images
// and og-renderer services: the reading of note bodies (fields.go, multipart.go), the
// table from domain errors to API errors (errors.go), the public URLs of publications,
// and the cached public reads (public.go) with their byte ranges (ranges.go).
//
// Ranges are served here, not by net/http's ServeContent, for three reasons.
// ServeContent reads through an io.ReadSeeker, and a large image's body is an object in the
// object store that a read streams by range (readcache.Entry.Open: one ranged GetObject
// per range, nothing buffered); a ReadSeeker over it would buffer the image or issue a
// request per Seek. ServeContent answers 412 with no body and 416 in plain text, where
// the API answers every error in JSON (docs/api.md "Errors"). And it serves any number of
// ranges, unmerged, where here a request for more than MaxRanges merged ranges gets the
// whole image (RFC 9110 §14.2 lets a server ignore Range), which bounds the part headers
// and GetObjects a request can cost.
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
