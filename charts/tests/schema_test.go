package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/config"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// valuesFiles are the chart's values files; each is rendered, validated and linted.
var valuesFiles = []string{"values.yaml", "values-dev.yaml", "values-prod.yaml"}

// TestEveryValuesFileIsListed keeps valuesFiles equal to the chart's values*.yaml, so
// that a new values file is rendered, linted and installed (make k8s-e2e) like the others.
func TestEveryValuesFileIsListed(t *testing.T) {
	found, err := filepath.Glob(filepath.Join(chartDir(t), "values*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range found {
		names = append(names, filepath.Base(f))
	}
	if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(valuesFiles))) {
		t.Errorf("the chart has values files %v; valuesFiles lists %v", names, valuesFiles)
	}
}

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
		{"production without trusted proxies", "production: true\ntrustedProxies: []", "trustedProxies"},
		{"IPv4 prefix longer than 32", "trustedProxies: [10.0.0.0/33]", "trustedProxies"},
		{"IPv4 octet over 255", "trustedProxies: [300.1.1.1/8]", "trustedProxies"},
		{"IPv6 prefix longer than 128", "trustedProxies: ['fd00::/129']", "trustedProxies"},
		{"host name as a proxy", "trustedProxies: [ingress-nginx]", "trustedProxies"},
		{"the per-binary image registry", "image:\n  registry: ghcr.io/sharenote", "registry"},
		{"a tag in the repository", "image:\n  repository: ghcr.io/sharenote/sharenote:1.0.0", "repository"},
		{"a digest in the repository", "image:\n  repository: ghcr.io/sharenote/sharenote@sha256:0123", "repository"},
		{"a tag with a slash", "image:\n  tag: v1/rc", "tag"},
		{"unknown object store", "objectStore:\n  type: minio", "type"},
		{"object store typo", "objectStore:\n  extrenal: {}", "extrenal"},
		{"keys in the object store URL", "objectStore:\n  external:\n    url: s3://AKIA:secret@images", "url"},
		{"an object store URL that is no S3", "objectStore:\n  external:\n    url: https://images.example.com", "url"},
		{"a bucket name with capitals", "objectStore:\n  bundled:\n    bucket: Images", "bucket"},
		{"a MinIO password under 8 characters", "objectStore:\n  bundled:\n    rootPassword: short", "rootPassword"},
		{"a MinIO digest that is no sha256", "objectStore:\n  bundled:\n    image:\n      digest: latest", "digest"},
		{"a tag in the MinIO repository", "objectStore:\n  bundled:\n    image:\n      repository: quay.io/minio/minio:latest", "repository"},
		{"a host-network port out of range", "hostNetwork:\n  ports:\n    notes: {http: 70000, admin: 19083}", "http"},
		{"a host-network port by name", "hostNetwork:\n  ports:\n    notes: {http: web, admin: 19083}", "http"},
		{"a host-network port typo", "hostNetwork:\n  ports:\n    notes: {http: 18083, amdin: 19083}", "amdin"},
		{"host networking as a bare flag", "hostNetwork: true", "hostNetwork"},
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

// TestProductionRequiresTrustedProxies proves the schema's production rule: an install
// that declares production: true (values-prod.yaml does) must name the proxies whose
// X-Forwarded-For is believed, while the defaults may leave the list empty.
func TestProductionRequiresTrustedProxies(t *testing.T) {
	c := loadChart(t)
	for _, tc := range []struct {
		name  string
		edit  func(v map[string]any)
		valid bool
	}{
		{"values-prod.yaml as it is", func(map[string]any) {}, true},
		{"values-prod.yaml without its trustedProxies", func(v map[string]any) { delete(v, "trustedProxies") }, false},
		{"values-prod.yaml with trustedProxies emptied", func(v map[string]any) { v["trustedProxies"] = []any{} }, false},
		{"not production, no proxies", func(v map[string]any) { v["production"] = false; v["trustedProxies"] = []any{} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := readValues(t, "values-prod.yaml")
			if user["production"] != true {
				t.Fatalf("values-prod.yaml sets production: %v, want true", user["production"])
			}
			tc.edit(user)
			vals, err := chartutil.CoalesceValues(c, user)
			if err != nil {
				t.Fatal(err)
			}
			err = chartutil.ValidateAgainstSchema(c, vals)
			if tc.valid != (err == nil) || (err != nil && !strings.Contains(err.Error(), "trustedProxies")) {
				t.Fatalf("ValidateAgainstSchema = %v, want valid=%v (an error naming trustedProxies)", err, tc.valid)
			}
			if _, err := renderErr(t, user); tc.valid != (err == nil) {
				t.Fatalf("render = %v, want valid=%v", err, tc.valid)
			}
		})
	}
}

// TestTrustedProxiesAreCIDRsOrIPs checks the schema's pattern for trustedProxies against
// the service's own parser: what the schema accepts must start the service, and malformed
// networks fail at install instead of in every pod's first line.
func TestTrustedProxiesAreCIDRsOrIPs(t *testing.T) {
	c := loadChart(t)
	for _, tc := range []struct {
		proxy string
		valid bool
	}{
		{"10.0.0.0/8", true},
		{"10.42.3.0/24", true},
		{"192.0.2.7", true},
		{"0.0.0.0/0", true},
		{"255.255.255.255/32", true},
		{"fd00::/8", true},
		{"2001:DB8::/32", true},
		{"2001:db8:0:0:0:0:0:1/128", true},
		{"::1", true},
		{"::/0", true},
		{"1:2:3:4:5:6:7::", true},
		{"::ffff:10.0.0.0/104", true},
		{"64:ff9b::192.0.2.1", true},
		{"10.0.0.0/33", false},
		{"300.1.1.1/8", false},
		{"10.0.0/8", false},
		{"10.0.0.0.0/8", false},
		{"010.0.0.0/8", false},
		{"10.0.0.0/08", false},
		{"10.0.0.0/", false},
		{"fd00::/129", false},
		{"2001:db8:::/32", false},
		{"1::2::3", false},
		{"1:2:3:4:5:6:7:8:9", false},
		{"12345::/16", false},
		{"2001:db8::g/64", false},
		{"fe80::1%eth0", false},
		{"10.0.0.0/8,10.1.0.0/16", false},
		{" 10.0.0.0/8", false},
		{"ingress-nginx", false},
		{"", false},
	} {
		t.Run(tc.proxy, func(t *testing.T) {
			user := map[string]any{"trustedProxies": []any{tc.proxy}}
			vals, err := chartutil.CoalesceValues(c, user)
			if err != nil {
				t.Fatal(err)
			}
			err = chartutil.ValidateAgainstSchema(c, vals)
			if tc.valid != (err == nil) {
				t.Fatalf("ValidateAgainstSchema(%q) = %v, want valid=%v", tc.proxy, err, tc.valid)
			}
			if err != nil && !strings.Contains(err.Error(), "trustedProxies") {
				t.Errorf("the error does not name trustedProxies: %v", err)
			}
			if tc.valid {
				env := map[string]string{"SHARE_TRUSTED_PROXIES": tc.proxy}
				if _, err := config.Load(func(k string) string { return env[k] }); err != nil {
					t.Errorf("the schema accepts %q but the service refuses it: %v", tc.proxy, err)
				}
			}
		})
	}
}

// TestSchemaForbidsUnknownKeysEverywhere walks values.schema.json: every object either
// lists its properties and forbids any other (additionalProperties: false), or is a
// typed map (additionalProperties: {type: …}); none is left open. A conditional (if,
// then, else) only adds rules to the object it sits in, so it needs no
// additionalProperties of its own, but it may name only keys that object declares: a
// misspelt key there would make the rule silently never apply.
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
				if k == "if" || k == "then" || k == "else" {
					declared, _ := s["properties"].(map[string]any)
					named, _ := sub["properties"].(map[string]any)
					var names []string
					for name := range named {
						names = append(names, name)
					}
					if req, ok := sub["required"].([]any); ok {
						for _, name := range req {
							names = append(names, fmt.Sprint(name))
						}
					}
					for _, name := range names {
						if _, ok := declared[name]; !ok {
							t.Errorf("%s/%s names %q, which %s does not declare", path, k, name, path)
						}
					}
					continue
				}
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
