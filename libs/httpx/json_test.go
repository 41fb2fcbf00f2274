package httpx_test

import (
	"errors"
	"testing"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/wire"
)

// body is a request type in the shape of libs/wire's: a required field, fields left out
// when empty, one that null clears.
type body struct {
	Content string                `json:"content"`
	Title   *string               `json:"title,omitempty"`
	Tags    map[string]any        `json:"tags,omitempty"`
	Summary wire.Optional[string] `json:"summary,omitzero"`
}

func TestUnmarshalJSONHoldsABodyToItsType(t *testing.T) {
	for _, tc := range []struct {
		name, body, code, field string
	}{
		{"all fields", `{"content":"x","title":"t","tags":{"a":1},"summary":"s"}`, "", ""},
		{"only the required field, and a member the type does not name", `{"content":"x","colour":"red"}`, "", ""},
		{"null clears a field that can be cleared", `{"content":"x","summary":null,"tags":null}`, "", ""},
		{"a required field left out", `{"title":"t"}`, errs.InvalidField, "content"},
		{"null for a required field", `{"content":null}`, errs.InvalidField, "content"},
		{"null for a field left out when empty", `{"content":"x","title":null}`, errs.InvalidField, "title"},
		{"a value of the wrong type", `{"content":"x","title":5}`, errs.InvalidField, "title"},
		{"a value of the wrong type inside an Optional", `{"content":"x","summary":5}`, errs.InvalidField, "summary"},
		{"faults are reported in the type's order, not the body's", `{"title":null,"content":null}`, errs.InvalidField, "content"},
		{"not an object", `["x"]`, errs.InvalidBody, ""},
		{"null for the whole body", `null`, errs.InvalidBody, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b body
			err := httpx.UnmarshalJSON([]byte(tc.body), &b)
			var e *errs.Error
			switch {
			case tc.code == "" && err != nil:
				t.Fatalf("UnmarshalJSON(%s) = %v, want nil", tc.body, err)
			case tc.code == "":
				return
			case !errors.As(err, &e) || e.Code != tc.code || e.Field != tc.field:
				t.Fatalf("UnmarshalJSON(%s) = %v, want %s on field %q", tc.body, err, tc.code, tc.field)
			}
		})
	}
}

func TestUnmarshalJSONReadsAnOptional(t *testing.T) {
	for raw, want := range map[string]struct {
		value *string
		sent  bool
	}{`{"content":""}`: {nil, false}, `{"content":"","summary":null}`: {nil, true}, `{"content":"","summary":"s"}`: {new("s"), true}} {
		var b body
		if err := httpx.UnmarshalJSON([]byte(raw), &b); err != nil {
			t.Fatal(err)
		}
		if v, sent := b.Summary.Get(); sent != want.sent || (v == nil) != (want.value == nil) || (v != nil && *v != *want.value) {
			t.Errorf("%s: summary Get() = %v, %v; want %v, %v", raw, v, sent, want.value, want.sent)
		}
	}
}
