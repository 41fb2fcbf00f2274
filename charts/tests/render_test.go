package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/routes"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const (
	releaseName = "sharenote"
	namespace   = "sharenote"
	// kubeVersion is what the rendering pretends to talk to: the chart needs ≥ 1.30 (the
	// preStop sleep action), and helm built without release ldflags would assume 1.20.
	kubeVersion = "v1.31.0"
)

// repoRoot is the repository root, two levels above this module.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func chartDir(t testing.TB) string { return filepath.Join(repoRoot(t), "charts", "sharenote") }

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return c
}

// readValues reads one of the chart's values files (values.yaml is the chart's own
// defaults, so it contributes nothing beyond them).
func readValues(t testing.TB, file string) map[string]any {
	t.Helper()
	if file == "" || file == "values.yaml" {
		return map[string]any{}
	}
	v, err := chartutil.ReadValuesFile(filepath.Join(chartDir(t), file))
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	return v.AsMap()
}

// renderCase is one way of installing the chart.
type renderCase struct {
	name string
	file string         // values file in charts/sharenote, as `helm -f`
	set  map[string]any // then these, as `helm --set` (dotted keys)
}

// renderCases are the installs every invariant is checked on: each values file, the
// all-in-one mode on the production defaults and on the dev values, the bundled MinIO
// pinned by digest without a volume, and production's object store through IRSA.
var renderCases = []renderCase{
	{name: "default", file: "values.yaml"},
	{name: "dev", file: "values-dev.yaml"},
	{name: "prod", file: "values-prod.yaml"},
	{name: "allInOne", file: "values.yaml", set: map[string]any{"mode": "allInOne"}},
	{name: "allInOne-dev", file: "values-dev.yaml", set: map[string]any{"mode": "allInOne"}},
	{name: "bundled-emptyDir", file: "values.yaml", set: map[string]any{
		"objectStore.type": "bundled", "objectStore.bundled.persistence.enabled": false,
		"objectStore.bundled.image.digest": "sha256:" + strings.Repeat("0f", 32)}},
	{name: "prod-irsa", file: "values-prod.yaml", set: map[string]any{
		"objectStore.external.existingSecret": "", "serviceAccountName": "sharenote-s3"}},
}

func (rc renderCase) values(t testing.TB) map[string]any {
	t.Helper()
	vals := readValues(t, rc.file)
	for k, v := range rc.set {
		setPath(vals, k, v)
	}
	return vals
}

// setPath sets a dotted key in nested maps, like `helm --set`.
func setPath(m map[string]any, dotted string, v any) {
	parts := strings.Split(dotted, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// object is one rendered Kubernetes object, decoded strictly into its typed struct.
type object struct {
	Kind, APIVersion, Name string
	Source                 string // the template file
	Hook                   bool   // rendered as a Helm hook
	Typed                  any    // *appsv1.Deployment, *corev1.Service, …
	Meta                   metav1.ObjectMeta
}

// rendered is everything one install produces.
type rendered struct {
	Case    renderCase
	Values  map[string]any // the coalesced values the templates saw
	Objects []object
	Notes   string
}

// render installs the chart client-only, as `helm template` does, and strictly decodes
// every object, the hooks included.
func render(t testing.TB, rc renderCase) *rendered {
	t.Helper()
	out, err := renderErr(t, rc.values(t))
	if err != nil {
		t.Fatalf("%s: render: %v", rc.name, err)
	}
	out.Case = rc
	return out
}

func renderErr(t testing.TB, vals map[string]any) (*rendered, error) {
	t.Helper()
	c := loadChart(t)
	rel, err := install(t, c, vals, releaseName, namespace)
	if err != nil {
		return nil, err
	}
	coalesced, err := chartutil.CoalesceValues(c, vals)
	if err != nil {
		return nil, err
	}
	out := &rendered{Values: coalesced.AsMap(), Notes: rel.Info.Notes}
	docs := splitDocs(rel.Manifest)
	for _, d := range docs {
		o, err := decodeStrict(d)
		if err != nil {
			return nil, err
		}
		out.Objects = append(out.Objects, o)
	}
	for _, h := range rel.Hooks {
		for _, d := range splitDocs(h.Manifest) {
			o, err := decodeStrict(d)
			if err != nil {
				return nil, fmt.Errorf("hook %s: %w", h.Path, err)
			}
			o.Hook = true
			o.Source = h.Path
			out.Objects = append(out.Objects, o)
		}
	}
	return out, nil
}

// install renders the chart client-only into a release, as `helm template` does.
func install(t testing.TB, c *chart.Chart, vals map[string]any, name, ns string) (*release.Release, error) {
	t.Helper()
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	inst := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	inst.DryRun = true
	inst.ClientOnly = true
	inst.Replace = true
	inst.ReleaseName = name
	inst.Namespace = ns
	inst.KubeVersion = kv
	return inst.Run(c, vals)
}

// templateStream is what `helm template NAME CHART -n NS` prints for vals: the manifest
// and the hooks, as one YAML stream.
func templateStream(t testing.TB, vals map[string]any, name, ns string) (string, error) {
	t.Helper()
	rel, err := install(t, loadChart(t), vals, name, ns)
	if err != nil {
		return "", err
	}
	docs := []string{rel.Manifest}
	for _, h := range rel.Hooks {
		docs = append(docs, fmt.Sprintf("# Source: %s\n%s", h.Path, h.Manifest))
	}
	return strings.Join(docs, "\n---\n"), nil
}

var sourceRe = regexp.MustCompile(`(?m)^# Source: (\S+)`)

// splitDocs returns the non-empty YAML documents of a manifest stream in a stable order.
func splitDocs(stream string) []string {
	m := releaseutil.SplitManifests(stream)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var docs []string
	for _, k := range keys {
		if strings.TrimSpace(stripComments(m[k])) != "" {
			docs = append(docs, m[k])
		}
	}
	return docs
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// serviceMonitor is the part of prometheus-operator's monitoring.coreos.com/v1
// ServiceMonitor the chart uses; decoding strictly into it rejects any other field.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		JobLabel          string `json:"jobLabel,omitempty"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames,omitempty"`
			Any        bool     `json:"any,omitempty"`
		} `json:"namespaceSelector"`
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path,omitempty"`
			Interval      string `json:"interval,omitempty"`
			ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// kinds maps apiVersion/kind to a constructor of the typed struct it must decode into;
// any other kind is an error, so the chart cannot grow an object no test looks at.
var kinds = map[string]func() any{
	"v1/ConfigMap":                            func() any { return new(corev1.ConfigMap) },
	"v1/Secret":                               func() any { return new(corev1.Secret) },
	"v1/Service":                              func() any { return new(corev1.Service) },
	"v1/Namespace":                            func() any { return new(corev1.Namespace) },
	"v1/ServiceAccount":                       func() any { return new(corev1.ServiceAccount) },
	"v1/Pod":                                  func() any { return new(corev1.Pod) },
	"apps/v1/Deployment":                      func() any { return new(appsv1.Deployment) },
	"apps/v1/StatefulSet":                     func() any { return new(appsv1.StatefulSet) },
	"autoscaling/v2/HorizontalPodAutoscaler":  func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
	"policy/v1/PodDisruptionBudget":           func() any { return new(policyv1.PodDisruptionBudget) },
	"batch/v1/Job":                            func() any { return new(batchv1.Job) },
	"batch/v1/CronJob":                        func() any { return new(batchv1.CronJob) },
	"networking.k8s.io/v1/Ingress":            func() any { return new(networkingv1.Ingress) },
	"networking.k8s.io/v1/NetworkPolicy":      func() any { return new(networkingv1.NetworkPolicy) },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return new(serviceMonitor) },
}

// decodeStrict turns one YAML document into its typed struct: duplicate keys, unknown
// fields and fields in the wrong case are all errors (the API server's strict decoding).
func decodeStrict(doc string) (object, error) {
	src := ""
	if m := sourceRe.FindStringSubmatch(doc); m != nil {
		src = m[1]
	}
	j, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		return object{}, fmt.Errorf("%s: YAML: %w", src, err)
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(j, &tm); err != nil {
		return object{}, fmt.Errorf("%s: %w", src, err)
	}
	mk, ok := kinds[tm.APIVersion+"/"+tm.Kind]
	if !ok {
		return object{}, fmt.Errorf("%s: no typed decoder for %s %s", src, tm.APIVersion, tm.Kind)
	}
	typed := mk()
	strictErrs, err := kjson.UnmarshalStrict(j, typed, kjson.DisallowUnknownFields)
	if err != nil {
		return object{}, fmt.Errorf("%s: decode %s: %w", src, tm.Kind, err)
	}
	if len(strictErrs) > 0 {
		return object{}, fmt.Errorf("%s: %s: %v", src, tm.Kind, strictErrs)
	}
	// Also through encoding/json with DisallowUnknownFields, the stdlib's own check.
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(mk()); err != nil {
		return object{}, fmt.Errorf("%s: decode %s: %w", src, tm.Kind, err)
	}
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(j, &meta); err != nil {
		return object{}, err
	}
	return object{Kind: tm.Kind, APIVersion: tm.APIVersion, Name: meta.Metadata.Name, Source: src, Typed: typed, Meta: meta.Metadata}, nil
}

// all returns the rendered objects of one Go type.
func all[T any](r *rendered) []*T {
	var out []*T
	for _, o := range r.Objects {
		if v, ok := o.Typed.(*T); ok {
			out = append(out, v)
		}
	}
	return out
}

// one returns the rendered object of type T named name, or fails.
func one[T any](t testing.TB, r *rendered, name string) *T {
	t.Helper()
	for _, o := range r.Objects {
		if v, ok := o.Typed.(*T); ok && o.Name == name {
			return v
		}
	}
	var zero T
	t.Fatalf("%s: no %T named %q", r.Case.name, zero, name)
	return nil
}

// val reads a dotted path of the coalesced values.
func (r *rendered) val(path string) any {
	var cur any = r.Values
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func (r *rendered) str(path string) string {
	s, _ := r.val(path).(string)
	return s
}

func (r *rendered) allInOne() bool { return r.str("mode") == "allInOne" }

// workloads are the names of the serving components this install must have, sorted:
// every target of libs/routes in split mode, the one all-in-one process otherwise.
func (r *rendered) workloads() []string {
	if r.allInOne() {
		return []string{"all-in-one"}
	}
	return slices.Sorted(slices.Values(routes.Targets))
}

// serveArgs is what a workload's container runs on the one image: its own target, or
// every target in the all-in-one.
func serveArgs(workload string) []string {
	if workload == "all-in-one" {
		return []string{"serve", "--target", routes.All}
	}
	return []string{"serve", "--target", workload}
}

// workloadSetting reads a workload's effective setting: the per-target value, else the
// shared default (the chart's merge).
func (r *rendered) workloadSetting(workload, path string) any {
	key := "services." + workload
	if workload == "all-in-one" {
		key = "allInOne"
	}
	if v := r.val(key + "." + path); v != nil {
		return v
	}
	return r.val("serviceDefaults." + path)
}

func fullname(component string) string { return releaseName + "-" + component }
