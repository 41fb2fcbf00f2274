// Package noteapi is the HTTP edge of the note domain shared by the publish, notes and
// images services: the translation of domain errors to the codes of CONTRACT.md, and the
// parsing of request fields that more than one service accepts.
package noteapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/note"
)

// Error translates a note domain error into its HTTP error; other errors pass unchanged
// (errs.Middleware turns them into 500 or 503).
func Error(err error) error {
	var e *errs.Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, note.ErrNotFound):
		return errs.NotFoundError()
	case errors.Is(err, note.ErrInvalidProperties):
		return errs.New(http.StatusBadRequest, errs.InvalidProperties, sentence(err))
	case errors.Is(err, note.ErrInvalidImage):
		return errs.New(http.StatusBadRequest, errs.InvalidImage, sentence(err))
	case errors.Is(err, note.ErrInvalidText):
		return errs.New(http.StatusBadRequest, errs.InvalidField, sentence(err))
	case errors.Is(err, note.ErrInvalidExpiry):
		return errs.New(http.StatusBadRequest, errs.InvalidField, "expires_at: "+sentence(err))
	case errors.Is(err, note.ErrInvalidCursor):
		return errs.New(http.StatusBadRequest, errs.InvalidCursor, "The cursor was not issued by this service for this account.")
	case errors.Is(err, note.ErrNoteTooLarge):
		return errs.New(http.StatusRequestEntityTooLarge, errs.NoteTooLarge, sentence(err))
	case errors.Is(err, note.ErrQuotaExceeded):
		return errs.New(http.StatusRequestEntityTooLarge, errs.StorageQuotaExceeded, "The account's image storage quota would be exceeded.")
	default:
		return err
	}
}

// sentence turns a wrapped domain error into a message: its text with a capital letter
// and a full stop.
func sentence(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	if s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	if s[len(s)-1] != '.' {
		s += "."
	}
	return s
}

// InvalidField is a 400 invalid_field.
func InvalidField(message string) *errs.Error {
	return errs.New(http.StatusBadRequest, errs.InvalidField, message)
}

// Properties parses a properties value: a JSON object, or null (nil map, ok).
func Properties(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errs.New(http.StatusBadRequest, errs.InvalidProperties, "properties must be a JSON object.")
	}
	return m, nil
}

// Expiry parses an expires_at value (RFC 3339 or YYYY-MM-DD, in the future).
func Expiry(s string, now time.Time) (*time.Time, error) {
	t, err := note.ParseExpiry(s, now)
	if err != nil {
		return nil, Error(err)
	}
	return &t, nil
}

// MaxPublicAge bounds how long a public read may be cached (SPEC.md "Limits").
const MaxPublicAge = 60 * time.Second

// ServePublic answers a public read of publication p (note JSON, page, image or preview):
// Cache-Control public with a max-age of at most 60 s and at most the time left before
// expiry, a strong ETag (etag, or the SHA-256 of body when empty), 304 for a matching
// If-None-Match, and X-Robots-Tag: noindex unless the owner made their notes indexable.
func ServePublic(c *gin.Context, p note.Publication, now time.Time, indexable bool, contentType, etag string, body []byte) {
	age := MaxPublicAge
	if p.ExpiresAt != nil {
		age = min(age, p.ExpiresAt.Sub(now))
	}
	if etag == "" {
		sum := sha256.Sum256(body)
		etag = hex.EncodeToString(sum[:16])
	}
	h := c.Writer.Header()
	h.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(max(age, 0)/time.Second)))
	h.Set("ETag", `"`+etag+`"`)
	if !indexable {
		h.Set("X-Robots-Tag", "noindex")
	}
	if etagMatches(c.GetHeader("If-None-Match"), `"`+etag+`"`) {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, contentType, body)
}

// etagMatches implements If-None-Match's weak comparison over a list of tags or "*".
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
