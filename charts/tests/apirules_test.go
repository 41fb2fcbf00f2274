package tests

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
)

// schemaVerdict validates values (dotted key → value, as `--set`) against the chart's
// schema and returns its error, if any.
func schemaVerdict(t *testing.T, set map[string]any) error {
	t.Helper()
	user := map[string]any{}
	for k, v := range set {
		setPath(user, k, v)
	}
	vals, err := chartutil.CoalesceValues(loadChart(t), user)
	if err != nil {
		t.Fatal(err)
	}
	return chartutil.ValidateAgainstSchema(loadChart(t), vals)
}

// apiProbe is one rule of the API server that values.schema.json repeats: where the
// values put a string, which strings the server accepts there.
type apiProbe struct {
	what    string
	values  func(s string) map[string]any // the values (dotted keys) that carry s
	samples []string
	// valid is the server's rule as k8s.io/apimachinery's validation (the server's own
	// code) states it, or for cron schedules the server's verdicts.
	valid func(s string) bool
	// server asks the API server to accept (dry run) an object holding s where the chart
	// puts it; `make k8s-e2e` compares its verdicts with the schema's. nil for a sample
	// that means "none" to the chart.
	server func(ctx context.Context, c kubernetes.Interface, ns, s string) error
}

// cronVerdicts are the CronJob API's verdicts on schedules (robfig/cron's standard parser,
// and no TZ= prefix: spec.timeZone is for that); `make k8s-e2e` asks the server each one.
var cronVerdicts = map[string]bool{
	"*/10 * * * *":            true,
	"0 3 * * MON-FRI":         true,
	"15,45 */2 1-7 JAN,JUL ?": true,
	"@hourly":                 true,
	"@daily":                  true,
	"*/10 * * * * *":          false,
	"*/10 * * *":              false,
	"every 10 minutes":        false,
	"TZ=UTC */10 * * * *":     false,
	"CRON_TZ=UTC 0 3 * * *":   false,
	"@fortnightly":            false,
	"":                        false,
}

var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

func probeConfigMap(ctx context.Context, c kubernetes.Interface, ns string, labels, annotations map[string]string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: labels, Annotations: annotations}}
	_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, dryRun)
	return err
}

func probeSecret(ctx context.Context, c kubernetes.Interface, ns, name string) error {
	if name == "" {
		return nil
	}
	_, err := c.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, dryRun)
	return err
}

func probeEgress(ctx context.Context, c kubernetes.Interface, ns string, rule networkingv1.NetworkPolicyEgressRule) error {
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: networkingv1.NetworkPolicySpec{
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}, Egress: []networkingv1.NetworkPolicyEgressRule{rule}}}
	_, err := c.NetworkingV1().NetworkPolicies(ns).Create(ctx, np, dryRun)
	return err
}

func probeContainers() []corev1.Container { return []corev1.Container{{Name: "probe", Image: "probe"}} }

var apiProbes = func() []apiProbe {
	errsOK := func(f func(string) []string) func(string) bool {
		return func(s string) bool { return len(f(s)) == 0 }
	}
	return []apiProbe{
		{"a pod label key", func(s string) map[string]any {
			return map[string]any{"serviceDefaults.podLabels": map[string]any{s: "x"}}
		}, []string{"team", "example.com/team", "app.kubernetes.io/part-of", "a_b.c", "-team", "team-", "Example.com/team", "example.com/", "/team", "a/b/c", "has space", strings.Repeat("k", 64)},
			errsOK(validation.IsQualifiedName),
			func(ctx context.Context, c kubernetes.Interface, ns, s string) error {
				return probeConfigMap(ctx, c, ns, map[string]string{s: "x"}, nil)
			}},
		{"a pod label value", func(s string) map[string]any {
			return map[string]any{"serviceDefaults.podLabels": map[string]any{"team": s}}
		}, []string{"", "blue", "v1.2.3", "A_b-c", "-blue", "blue.", "a/b", "has space", strings.Repeat("v", 63), strings.Repeat("v", 64)},
			errsOK(validation.IsValidLabelValue),
			func(ctx context.Context, c kubernetes.Interface, ns, s string) error {
				return probeConfigMap(ctx, c, ns, map[string]string{"team": s}, nil)
			}},
		{"a node selector value", func(s string) map[string]any {
			return map[string]any{"services.notes.nodeSelector": map[string]any{"kubernetes.io/os": s}}
		}, []string{"linux", "linux ", "Linux_1"},
			errsOK(validation.IsValidLabelValue),
			func(ctx context.Context, c kubernetes.Interface, ns, s string) error {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"kubernetes.io/os": s}, Containers: probeContainers()}}
				_, err := c.CoreV1().Pods(ns).Create(ctx, pod, dryRun)
				return err
			}},
		{"a pod annotation key", func(s string) map[string]any {
			return map[string]any{"serviceDefaults.podAnnotations": map[string]any{s: "anything at all"}}
		}, []string{"example.com/owner", "checksum", "example.com/", "bad key"},
			errsOK(validation.IsQualifiedName),
			func(ctx context.Context, c kubernetes.Interface, ns, s string) error {
				return probeConfigMap(ctx, c, ns, nil, map[string]string{s: "anything at all"})
			}},
		{"a Secret name", func(s string) map[string]any {
			return map[string]any{"database.existingSecret": s}
		}, []string{"", "sharenote-db", "db.prod", "Sharenote", "db_prod", "-db", "db-", strings.Repeat("s", 254)},
			func(s string) bool { return s == "" || len(validation.IsDNS1123Subdomain(s)) == 0 },
			probeSecret},
		{"an image pull Secret", func(s string) map[string]any {
			return map[string]any{"image.pullSecrets": []any{s}}
		}, []string{"registry-example-com", "Registry"},
			errsOK(validation.IsDNS1123Subdomain),
			probeSecret},
		{"a named egress port", func(s string) map[string]any {
			return map[string]any{"networkPolicy.extraEgress": []any{map[string]any{"ports": []any{map[string]any{"port": s}}}}}
		}, []string{"metrics", "otlp-http", "h2c", "grpc1", "1234x", "Metrics", "otlp--http", "-otlp", "otlp-", "a-very-long-port-name", "123"},
			errsOK(validation.IsValidPortName),
			func(ctx context.Context, c kubernetes.Interface, ns, s string) error {
				port := intstr.FromString(s)
				return probeEgress(ctx, c, ns, networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{{Port: &port}}})
			}},
		{"an ipBlock CIDR", func(s string) map[string]any {
			return map[string]any{"networkPolicy.postgres": map[string]any{"to": []any{map[string]any{"ipBlock": map[string]any{"cidr": s}}}, "ports": []any{5432}}}
		}, []string{"10.20.0.0/24", "10.0.0.0/8", "fd00::/64", "10.20.0.0", "10.0.0.0/33", "fd00::/129", "300.0.0.0/8"},
			func(s string) bool { _, err := netip.ParsePrefix(s); return err == nil },
			func(ctx context.Context, c kubernetes.Interface, ns, s string) error {
				return probeEgress(ctx, c, ns, networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: s}}}})
			}},
		{"a reaper schedule", func(s string) map[string]any {
			return map[string]any{"reaper.schedule": s}
		}, slices.Sorted(maps.Keys(cronVerdicts)),
			func(s string) bool { return cronVerdicts[s] },
			func(ctx context.Context, c kubernetes.Interface, ns, s string) error {
				cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: batchv1.CronJobSpec{Schedule: s,
					JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever, Containers: probeContainers()}}}}}}
				_, err := c.BatchV1().CronJobs(ns).Create(ctx, cj, dryRun)
				return err
			}},
	}
}()

// TestSchemaRefusesWhatTheAPIServerRefuses proves values.schema.json turns away, at `helm
// install` time, what the API server would refuse in the objects the chart makes of it
// (names, label keys and values, named ports, CIDRs, cron schedules), and accepts what it
// accepts: each sample is judged by the validation code the server runs
// (k8s.io/apimachinery), cron schedules by the server's verdicts. `make k8s-e2e` asks a
// real API server about every sample too.
func TestSchemaRefusesWhatTheAPIServerRefuses(t *testing.T) {
	for _, p := range apiProbes {
		for _, sample := range p.samples {
			t.Run(fmt.Sprintf("%s %q", p.what, sample), func(t *testing.T) {
				err := schemaVerdict(t, p.values(sample))
				if want := p.valid(sample); want != (err == nil) {
					t.Errorf("schema: %v; the API server's rule says valid=%v", err, want)
				}
			})
		}
	}
}

// TestHPAMinAboveMaxFailsTheRender: a JSON schema cannot compare two values, so the chart
// fails the render in one line where the API server would refuse the HPA, for the shared
// default and for one target, but not for a target whose HPA is off.
func TestHPAMinAboveMaxFailsTheRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]any
		want string // "" renders
	}{
		{"shared default", map[string]any{"serviceDefaults.hpa.minReplicas": 12, "serviceDefaults.hpa.maxReplicas": 4}, "hpa.minReplicas (12) is more than hpa.maxReplicas (4)"},
		{"one target", map[string]any{"services.notes.hpa.minReplicas": 11}, "notes: hpa.minReplicas (11) is more than hpa.maxReplicas (10)"},
		{"equal is fine", map[string]any{"services.notes.hpa.minReplicas": 10}, ""},
		{"off is fine", map[string]any{"services.auth.hpa": map[string]any{"enabled": false, "minReplicas": 5, "maxReplicas": 1}}, ""},
		{"all-in-one", map[string]any{"mode": "allInOne", "allInOne.hpa": map[string]any{"enabled": true, "minReplicas": 3, "maxReplicas": 2}}, "all-in-one: hpa.minReplicas (3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := map[string]any{}
			for k, v := range tc.set {
				setPath(vals, k, v)
			}
			_, err := renderErr(t, vals)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("render: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("render = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestHelmTestPodAsksEveryWorkloadForReadyz: `helm test` runs one Pod (a test hook) that
// asks each serving workload's Service for /readyz on the admin port, hardened like
// every other pod of the release, and nothing renders it when tests are off.
func TestHelmTestPodAsksEveryWorkloadForReadyz(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		var pod *corev1.Pod
		for _, o := range r.Objects {
			if p, ok := o.Typed.(*corev1.Pod); ok {
				if !o.Hook || o.Meta.Annotations["helm.sh/hook"] != "test" {
					t.Errorf("Pod %s is not a test hook", o.Name)
				}
				if o.Meta.Annotations["helm.sh/hook-delete-policy"] != "before-hook-creation" {
					t.Errorf("Pod %s: hook-delete-policy %q; `helm test --logs` needs it kept", o.Name, o.Meta.Annotations["helm.sh/hook-delete-policy"])
				}
				pod = p
			}
		}
		if pod == nil {
			t.Fatal("no test Pod")
		}
		checkRecommendedLabels(t, pod.Name, pod.Labels)
		checkPodHardening(t, pod.Name, pod.Spec)
		if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || len(pod.Spec.Containers) != 1 {
			t.Fatalf("restartPolicy %q, %d containers", pod.Spec.RestartPolicy, len(pod.Spec.Containers))
		}
		c := pod.Spec.Containers[0]
		checkResources(t, pod.Name, c.Resources)
		script := strings.Join(c.Args, "\n")
		for _, w := range r.workloads() {
			svc := one[corev1.Service](t, r, fullname(w))
			if p := servicePort(svc, "admin"); p == nil || p.Port != 9090 {
				t.Errorf("Service %s has no admin port 9090", svc.Name)
			}
			if !strings.Contains(script, " "+svc.Name+" ") {
				t.Errorf("the test does not ask %s:\n%s", svc.Name, script)
			}
		}
		if !strings.Contains(script, `"http://$svc:9090/readyz"`) || !strings.Contains(script, `exit "$failed"`) {
			t.Errorf("the test does not fail on a /readyz that is not 200:\n%s", script)
		}
	})
	t.Run("off", func(t *testing.T) {
		r, err := renderErr(t, map[string]any{"tests": map[string]any{"enabled": false}})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(all[corev1.Pod](r)); n != 0 {
			t.Errorf("%d test Pods with tests.enabled false", n)
		}
	})
}
