// Package openapi holds the service's OpenAPI document, the machine-readable form of
// SPEC.md and CONTRACT.md. The YAML file next to this code is the source (docs/openapi.yaml
// links to it); GET /api/openapi.json serves it as JSON, and the test kit validates every
// response of the HTTP suites against it, so the document cannot drift from the service.
//
// The package deliberately depends on a YAML library only: the validator (kin-openapi)
// lives in the test kit, so service binaries stay lean.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v3"
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

// JSON returns the document converted to JSON, with the keys in the order of the YAML
// source. The conversion runs once; each call returns a fresh copy that the caller may
// keep or change.
func JSON() []byte { return bytes.Clone(jsonDocument()) }

// toJSON converts a YAML document to compact JSON, keeping the order of mapping keys.
// Mapping keys must be scalars; merge keys and non-JSON values (such as .inf) are errors.
func toJSON(src []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("parse yaml: %w", err)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &root); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: want one document, got %d nodes", n.Line, len(n.Content))
		}
		return writeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return fmt.Errorf("line %d: mapping keys must be plain scalars", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeValue(buf, k.Value); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeJSON(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if err := writeValue(buf, v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		return nil
	default:
		return fmt.Errorf("line %d: unsupported yaml node kind %v", n.Line, n.Kind)
	}
}

// writeValue writes one JSON scalar without escaping <, > and & (the document is served
// as application/json, never embedded in HTML).
func writeValue(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode ends every value with a newline.
	return nil
}
