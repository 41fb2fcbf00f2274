package note

import (
	"fmt"
	"strings"
	"time"
)

// dateLayout is the plain-date form of an expiry, YYYY-MM-DD.
const dateLayout = "2006-01-02"

// ParseExpiry parses a client's expires_at, given as RFC 3339 (fractional seconds optional,
// any offset) or as a plain date YYYY-MM-DD meaning 00:00 UTC that day, the two forms
// authors actually write. The result is in UTC and truncated to milliseconds, the precision
// the API returns timestamps with, so a stored expiry reads back exactly as it will be
// compared. An expiry must be strictly after now, because a note that expires on publication
// would never be readable. Every failure is an error wrapping ErrInvalidExpiry with the reason.
func ParseExpiry(s string, now time.Time) (time.Time, error) {
	var t time.Time
	var err error
	if len(s) == len(dateLayout) {
		t, err = time.Parse(dateLayout, s)
	} else {
		t, err = time.Parse(time.RFC3339Nano, rfc3339Upper(s))
	}
	// The time package also takes a comma before fractional seconds; RFC 3339 does not.
	if err != nil || strings.IndexByte(s, ',') >= 0 {
		return time.Time{}, fmt.Errorf("%w: must be RFC 3339 (2026-11-22T10:00:00Z) or YYYY-MM-DD", ErrInvalidExpiry)
	}
	t = t.UTC().Truncate(time.Millisecond)
	if !t.After(now) {
		return time.Time{}, fmt.Errorf("%w: %s must be in the future", ErrInvalidExpiry, t.Format("2006-01-02T15:04:05.000Z07:00"))
	}
	return t, nil
}

// rfc3339Upper uppercases the "t" and "z" that RFC 3339 allows in lower case and the time
// package does not; no other letter can appear in a valid timestamp.
func rfc3339Upper(s string) string {
	if strings.IndexByte(s, 't') < 0 && strings.IndexByte(s, 'z') < 0 {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c == 't' || c == 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}
