package wire_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sharenote/sharenote/libs/openapi"
	"github.com/sharenote/sharenote/libs/wire"
)

// TestTypesMatchTheOpenAPISchemas walks each request and answer type beside its schema:
// the JSON names of a struct are the schema's properties, a field the encoder always
// writes is required, a field that can be null (pointer, map, Optional) is where the
// schema is nullable, and the kinds agree all the way down. A field added to the document
// or to a type fails here until the other follows.
func TestTypesMatchTheOpenAPISchemas(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON())
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"TokenRequest":    wire.TokenRequest{},
		"TokenResponse":   wire.Token{},
		"PublicNote":      wire.PublicNote{},
		"NoteUpdate":      wire.NoteUpdate{},
		"OwnerNote":       wire.OwnerNote{},
		"VersionList":     wire.VersionList{},
		"Version":         wire.Version{},
		"UnshareRequest":  wire.UnshareRequest{},
		"UnshareResponse": wire.Unshared{},
		"PublishJSON":     wire.PublishRequest{},
		"PublishResponse": wire.PublishResponse{},
		"NoteList":        wire.NoteList{},
		"Profile":         wire.Profile{},
		"SettingsInput":   wire.SettingsInput{},
		"Site":            wire.Site{},
		"SiteInput":       wire.SiteInput{},
	} {
		ref := doc.Components.Schemas[name]
		if ref == nil {
			t.Errorf("the document has no schema %s", name)
			continue
		}
		compare(t, name, reflect.TypeOf(v), ref.Value)
	}
}

// TestMultipartFormsHaveTheJSONFields: the multipart bodies are written from the JSON
// types (each JSON field a form field), so their schemas must name the same fields.
func TestMultipartFormsHaveTheJSONFields(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON())
	if err != nil {
		t.Fatal(err)
	}
	for form, body := range map[string]string{"PublishMultipart": "PublishJSON", "NoteUpdateMultipart": "NoteUpdate"} {
		f, b := doc.Components.Schemas[form].Value, doc.Components.Schemas[body].Value
		if got, want := slices.Sorted(maps.Keys(f.Properties)), slices.Sorted(maps.Keys(b.Properties)); !slices.Equal(got, want) {
			t.Errorf("%s has the fields %v, %s %v", form, got, body, want)
		}
	}
}

var (
	timeType     = reflect.TypeFor[wire.Time]()
	optionalName = reflect.TypeFor[wire.Optional[string]]().Name()[:len("Optional[")]
)

func compare(t *testing.T, at string, typ reflect.Type, s *openapi3.Schema) {
	t.Helper()
	kind := func(want string) {
		if !s.Type.Is(want) {
			t.Errorf("%s: Go %s, schema type %v", at, typ, s.Type)
		}
	}
	switch {
	case typ == timeType:
		kind("string")
		if s.Format != "date-time" {
			t.Errorf("%s: Go Time, schema format %q", at, s.Format)
		}
	case typ.Kind() == reflect.Pointer:
		compare(t, at, typ.Elem(), s)
	case strings.HasPrefix(typ.Name(), optionalName):
		f, _ := typ.FieldByName("value")
		compare(t, at, f.Type, s)
	case typ.Kind() == reflect.Struct:
		kind("object")
		var names []string
		for _, f := range reflect.VisibleFields(typ) {
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if !f.IsExported() || f.Anonymous || name == "" || name == "-" {
				continue
			}
			names = append(names, name)
			prop := s.Properties[name]
			if prop == nil {
				t.Errorf("%s.%s: not in the schema", at, name)
				continue
			}
			omitted := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			if required := slices.Contains(s.Required, name); required == omitted {
				t.Errorf("%s.%s: required %v in the schema, but the Go field is omitted when empty: %v", at, name, required, omitted)
			}
			nullable := f.Type.Kind() == reflect.Map ||
				(!omitted && f.Type.Kind() == reflect.Pointer) || strings.HasPrefix(f.Type.Name(), optionalName)
			if nullable != prop.Value.Nullable && f.Type.Kind() != reflect.Map {
				t.Errorf("%s.%s: nullable %v in the schema, %v in Go (%s)", at, name, prop.Value.Nullable, nullable, f.Type)
			}
			compare(t, at+"."+name, f.Type, prop.Value)
		}
		for name := range s.Properties {
			if !slices.Contains(names, name) {
				t.Errorf("%s.%s: in the schema, not in Go", at, name)
			}
		}
	case typ.Kind() == reflect.Slice:
		kind("array")
		compare(t, at+"[]", typ.Elem(), s.Items.Value)
	case typ.Kind() == reflect.Map:
		kind("object")
		if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
			t.Errorf("%s: a Go map, but the schema allows no additional properties", at)
		}
	case typ.Kind() == reflect.String:
		kind("string")
	case typ.Kind() == reflect.Bool:
		kind("boolean")
	case typ.Kind() == reflect.Int || typ.Kind() == reflect.Int64:
		kind("integer")
	default:
		t.Errorf("%s: no rule for Go %s", at, typ)
	}
}
