package note_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/note"
)

var expiryNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func TestParseExpiry(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want time.Time
	}{
		{"RFC 3339 in UTC", "2026-12-01T08:30:00Z", time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC)},
		{"RFC 3339 with milliseconds", "2026-12-01T08:30:00.123Z", time.Date(2026, 12, 1, 8, 30, 0, 123e6, time.UTC)},
		{"fractional seconds are truncated to milliseconds", "2026-12-01T08:30:00.123999999Z", time.Date(2026, 12, 1, 8, 30, 0, 123e6, time.UTC)},
		{"an offset is converted to UTC", "2026-12-01T08:30:00+02:00", time.Date(2026, 12, 1, 6, 30, 0, 0, time.UTC)},
		{"a negative offset crosses midnight", "2026-12-01T22:30:00-05:30", time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)},
		{"lower-case t and z are RFC 3339", "2026-12-01t08:30:00z", time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC)},
		{"a plain date is midnight UTC", "2026-11-23", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{"one millisecond after now is the future", "2026-11-22T10:00:00.001Z", expiryNow.Add(time.Millisecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := note.ParseExpiry(tt.s, expiryNow)
			if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
				t.Errorf("ParseExpiry(%q) = %v, %v, want %v", tt.s, got, err, tt.want)
			}
		})
	}
}

func TestParseExpiryRejects(t *testing.T) {
	tests := []struct {
		name       string
		s          string
		wantReason string
	}{
		{"now is not the future", "2026-11-22T10:00:00Z", "must be in the future"},
		{"now in another offset is not the future", "2026-11-22T11:00:00+01:00", "must be in the future"},
		{"less than a millisecond after now truncates to now", "2026-11-22T10:00:00.0009Z", "must be in the future"},
		{"the past", "2020-01-01T00:00:00Z", "must be in the future"},
		{"today as a date is already past", "2026-11-22", "must be in the future"},
		{"empty", "", "must be RFC 3339"},
		{"a date without zero padding", "2026-12-1", "must be RFC 3339"},
		{"an impossible date", "2026-02-30", "must be RFC 3339"},
		{"a time without an offset", "2026-12-01T08:30:00", "must be RFC 3339"},
		{"a space instead of T", "2026-12-01 08:30:00Z", "must be RFC 3339"},
		{"hour 24", "2026-12-01T24:00:00Z", "must be RFC 3339"},
		{"a comma before fractional seconds", "2026-12-01T08:30:00,5Z", "must be RFC 3339"},
		{"surrounding spaces", " 2026-12-01", "must be RFC 3339"},
		{"a Unix timestamp", "1795000000", "must be RFC 3339"},
		{"a duration", "24h", "must be RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := note.ParseExpiry(tt.s, expiryNow)
			if !errors.Is(err, note.ErrInvalidExpiry) {
				t.Fatalf("ParseExpiry(%q) = %v, %v, want ErrInvalidExpiry", tt.s, got, err)
			}
			if !strings.Contains(err.Error(), tt.wantReason) {
				t.Errorf("error %q does not contain %q", err, tt.wantReason)
			}
		})
	}
}

func FuzzParseExpiry(f *testing.F) {
	for _, seed := range []string{"2026-12-01", "2026-12-01T08:30:00.123456+02:00", "2026-11-22T10:00:00Z", "x", "2026-12-01t08:30:00z"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := note.ParseExpiry(s, expiryNow)
		if err != nil {
			if !errors.Is(err, note.ErrInvalidExpiry) {
				t.Fatalf("ParseExpiry(%q) error %v does not wrap ErrInvalidExpiry", s, err)
			}
			return
		}
		if !got.After(expiryNow) || got.Location() != time.UTC || got.Nanosecond()%int(time.Millisecond) != 0 {
			t.Fatalf("ParseExpiry(%q) = %v: want a future UTC time in whole milliseconds", s, got)
		}
	})
}
