// Package noteapi is the HTTP edge of the note domain shared by the publish, notes, images
// and og-renderer services: the parsing of request fields that more than one service
// accepts, the public URLs of publications, and the cached public reads. The domain's
// errors pass through it unchanged; errs translates them.
package noteapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/routes"
)

// InvalidField is a 400 invalid_field.
func InvalidField(message string) *errs.Error {
	return errs.New(http.StatusBadRequest, errs.InvalidField, message)
}

// Query returns the values of the known parameters of a request's query string (its
// RawQuery), per CONTRACT.md "Errors": a query string that is not valid percent-encoding is
// 400 with the code of the parameter whose pair is malformed (invalid_cursor, invalid_limit,
// else invalid_field), as is a known parameter given more than once; unknown parameters are
// ignored, because shared links carry utm_* and fbclid. gin's c.Query drops a malformed
// query string silently and would answer as if no parameter had been given.
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

// Properties parses a properties value: a JSON object, or null (nil map, ok). Nesting
// deeper than note.MaxPropertiesDepth is refused before the value is decoded, with the
// domain's note.ErrInvalidProperties.
func Properties(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if err := note.CheckJSONDepth(raw); err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errs.New(http.StatusBadRequest, errs.InvalidProperties, "properties must be a JSON object.")
	}
	return m, nil
}

// Expiry parses an expires_at value (RFC 3339 or YYYY-MM-DD, in the future); a bad value
// is the domain's note.ErrInvalidExpiry with its reason.
func Expiry(s string, now time.Time) (*time.Time, error) {
	t, err := note.ParseExpiry(s, now)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// PageURL returns the public URL of a publication, its page, as every response that
// names a publication gives it.
func PageURL(notes *note.Core, cuid string) string {
	return routes.NotePage.URL(notes.PublicURL(), cuid)
}

// Warning is a warning in a publish or PATCH response (CONTRACT.md "Stale updates and
// warnings").
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Ref     string `json:"ref"`
}

// Warnings returns the response's warnings array: empty, never null, when there are none.
func Warnings(ws []note.Warning) []Warning {
	out := make([]Warning, len(ws))
	for i, w := range ws {
		out[i] = Warning{Code: w.Code, Message: w.Message, Ref: w.Ref}
	}
	return out
}

// SetETag sends a publication's etag in the ETag header of an owner's response.
func SetETag(c *gin.Context, p note.Publication) {
	c.Header("ETag", `"`+p.ETag+`"`)
}
