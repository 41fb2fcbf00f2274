package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// valuesFiles are the chart's values files; each is rendered, validated and linted.
var valuesFiles = []string{"values.yaml", "values-dev.yaml", "values-prod.yaml"}

func TestValuesFilesSatisfyTheSchema(t *testing.T) {
	c := loadChart(t)
	for _, f := range valuesFiles {
		t.Run(f, func(t *testing.T) {
			vals, err := chartutil.CoalesceValues(c, readValues(t, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := chartutil.ValidateAgainstSchema(c, vals); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestValuesTyposFailTheSchema proves that a misspelt or misplaced key is an error, not a
// silently ignored setting.
func TestValuesTyposFailTheSchema(t *testing.T) {
	c := loadChart(t)
	for _, tc := range []struct {
		name string
		yaml string
		want string // part of the error
	}{
		{"replicaCount at the top level", "replicaCount: 3", "replicaCount"},
		{"misspelt service setting", "services:\n  auth:\n    replicass: 3", "replicass"},
		{"unknown service", "services:\n  authh: {}", "authh"},
		{"misspelt shared default", "serviceDefaults:\n  hpa:\n    enabeld: true", "enabeld"},
		{"misspelt resource", "services:\n  notes:\n    resources:\n      request:\n        cpu: 1", "request"},
		{"ingress typo", "ingress:\n  annotaions: {}", "annotaions"},
		{"TLS typo", "ingress:\n  tls:\n    secret: x", "secret"},
		{"network policy peer typo", "networkPolicy:\n  postgres:\n    to:\n      - podSelecter: {}\n    ports: [5432]", "podSelecter"},
		{"unknown mode", "mode: monolith", "mode"},
		{"bad log level", "logLevel: verbose", "logLevel"},
		{"port out of range", "networkPolicy:\n  redis:\n    to: []\n    ports: [70000]", "ports"},
		{"replicas as a string", "serviceDefaults:\n  replicas: two", "replicas"},
		{"env that is not a string", "extraEnv:\n  SHARE_IMAGE_QUOTA_BYTES: 1000", "SHARE_IMAGE_QUOTA_BYTES"},
		{"OTEL env of another name", "otel:\n  env:\n    SHARE_LOG_LEVEL: debug", "SHARE_LOG_LEVEL"},
		{"not a database URL", "database:\n  url: mysql://x", "url"},
		{"bad quantity", "serviceDefaults:\n  tmpSizeLimit: lots", "tmpSizeLimit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user, err := chartutil.ReadValues([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			vals, err := chartutil.CoalesceValues(c, user)
			if err != nil {
				t.Fatal(err)
			}
			err = chartutil.ValidateAgainstSchema(c, vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ValidateAgainstSchema = %v, want an error naming %q", err, tc.want)
			}
			// And an install (helm's own path) refuses it too.
			if _, err := renderErr(t, user.AsMap()); err == nil {
				t.Fatal("the chart rendered values the schema rejects")
			}
		})
	}
}

// TestSchemaForbidsUnknownKeysEverywhere walks values.schema.json: every object either
// lists its properties and forbids any other (additionalProperties: false), or is a
// typed map (additionalProperties: {type: …}); none is left open.
func TestSchemaForbidsUnknownKeysEverywhere(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		isObject := s["type"] == "object" || s["properties"] != nil
		if isObject {
			ap, ok := s["additionalProperties"]
			switch {
			case !ok:
				t.Errorf("%s: object without additionalProperties", path)
			case s["properties"] != nil && ap != false:
				t.Errorf("%s: has properties but additionalProperties is %v, want false", path, ap)
			case ap == true:
				t.Errorf("%s: additionalProperties: true", path)
			}
		}
		if s["type"] == "array" && s["items"] == nil {
			t.Errorf("%s: array without an items schema", path)
		}
		for k, v := range s {
			switch sub := v.(type) {
			case map[string]any:
				if k == "properties" || k == "definitions" || k == "$defs" {
					for name, ps := range sub {
						if m, ok := ps.(map[string]any); ok {
							walk(path+"/"+k+"/"+name, m)
						}
					}
				} else {
					walk(path+"/"+k, sub)
				}
			case []any:
				for _, e := range sub {
					if m, ok := e.(map[string]any); ok {
						walk(path+"/"+k+"[]", m)
					}
				}
			}
		}
	}
	walk("#", schema)
	if schema["additionalProperties"] != false {
		t.Error("the top level allows unknown keys")
	}
}

// TestSchemaCoversEveryDefault makes sure values.yaml and the schema describe the same
// keys: a default the schema does not know would fail every install, and a key only in
// the schema is undocumented.
func TestSchemaCoversEveryDefault(t *testing.T) {
	c := loadChart(t)
	var schema map[string]any
	if err := json.Unmarshal(c.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	props := schema["properties"].(map[string]any)
	var inSchema []string
	for k := range props {
		inSchema = append(inSchema, k)
	}
	var inValues []string
	for k := range c.Values {
		inValues = append(inValues, k)
	}
	slices.Sort(inSchema)
	slices.Sort(inValues)
	if !slices.Equal(inSchema, inValues) {
		t.Errorf("top-level keys: schema %v, values.yaml %v", inSchema, inValues)
	}
}

// TestHelmLint runs helm's linter in-process (the same rules as `helm lint`) for every
// values file: errors and warnings fail, information (such as "icon is recommended") not.
func TestHelmLint(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range valuesFiles {
		t.Run(f, func(t *testing.T) {
			linter := lint.AllWithKubeVersion(chartDir(t), readValues(t, f), namespace, kv)
			for _, m := range linter.Messages {
				t.Logf("%s", m)
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint -f %s: %s", f, m)
				}
			}
		})
	}
	t.Run("typo", func(t *testing.T) {
		user, err := chartutil.ReadValues([]byte("services:\n  auth:\n    replicass: 3\n"))
		if err != nil {
			t.Fatal(err)
		}
		linter := lint.AllWithKubeVersion(chartDir(t), user.AsMap(), namespace, kv)
		if linter.HighestSeverity < support.ErrorSev {
			t.Fatalf("helm lint passed a misspelt key: %v", linter.Messages)
		}
	})
}
