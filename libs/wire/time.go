package wire

import (
	"encoding/json"
	"fmt"
	"time"
)

// Time is a timestamp of the API: RFC 3339 in UTC with exactly three fractional digits,
// the form every answer writes; any RFC 3339 time reads.
type Time struct{ time.Time }

// TimeLayout is the form in which the API writes times.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// At is t as the API writes it.
func At(t time.Time) Time { return Time{t} }

// AtPtr is t as the API writes it, or nil (JSON null) for no time.
func AtPtr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	return &Time{*t}
}

// MarshalJSON writes the API's form of the time.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(TimeLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimeLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads any RFC 3339 time.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// Optional is a field of an update that may also be cleared: the zero value is not sent,
// Set(v) sends v and Clear() sends null.
type Optional[T any] struct {
	value T
	state uint8 // 0 unset, 1 set, 2 cleared
}

// Set returns an Optional that sends v.
func Set[T any](v T) Optional[T] { return Optional[T]{value: v, state: 1} }

// Clear returns an Optional that sends null, which clears the field.
func Clear[T any]() Optional[T] { return Optional[T]{state: 2} }

// IsZero reports whether the field is left out of the request (for omitzero).
func (o Optional[T]) IsZero() bool { return o.state == 0 }

// MarshalJSON writes the value, or null for a cleared field.
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if o.state == 2 {
		return []byte("null"), nil
	}
	return json.Marshal(o.value)
}

// UnmarshalJSON reads null as a cleared field and any other value as a set one.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = Clear[T]()
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = Set(v)
	return nil
}

// Get returns what the field says: sent is false when it was left out, and v is nil when
// it was cleared.
func (o Optional[T]) Get() (v *T, sent bool) {
	if o.state == 1 {
		return &o.value, true
	}
	return nil, o.state == 2
}
