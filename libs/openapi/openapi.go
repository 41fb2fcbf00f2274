// Package openapi holds the service's OpenAPI document, the machine-readable form of
// docs/api.md. The YAML file next to this code is the source (docs/openapi.yaml
// links to it); GET /api/openapi.json serves it as JSON, and the test kit validates every
// response of the HTTP suites against it, so the document cannot drift from the service.
//
// The package deliberately depends on a YAML library only: the validator (kin-openapi)
// lives in the test kit, so the binary stays lean.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/sharenote/sharenote/libs/yamljson"
)

//go:embed openapi.yaml
var document []byte

// jsonDocument converts the embedded YAML once, on first use.
var jsonDocument = sync.OnceValue(func() []byte {
	b, err := toJSON(document)
	if err != nil {
		// The document is embedded at build time and its test converts it, so this is a
		// build that skipped the tests, not a runtime condition to handle.
		panic(fmt.Sprintf("openapi: embedded document: %v", err))
	}
	return b
})

// YAML returns the document as written, in YAML.
func YAML() []byte { return bytes.Clone(document) }

// JSON returns the document converted to JSON (object keys sorted). The conversion runs
// once; each call returns a fresh copy that the caller may keep or change.
func JSON() []byte { return bytes.Clone(jsonDocument()) }

// maxDepth bounds the nesting of the document, which is ours: far above what it uses.
const maxDepth = 64

// toJSON converts a YAML document to compact JSON with the conversion every YAML of the
// service goes through (yamljson), without escaping <, > and & (the document is served as
// application/json, never embedded in HTML).
func toJSON(src []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("parse yaml: %w", err)
	}
	if len(root.Content) != 1 {
		return nil, fmt.Errorf("want one document, got %d", len(root.Content))
	}
	v, err := yamljson.Value(root.Content[0], maxDepth)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
