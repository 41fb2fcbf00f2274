package tests

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const devNamespace = "sharenote-dev"

func k8sDir(t testing.TB) string { return filepath.Join(repoRoot(t), "k8s") }

// kustomizeYAML runs `kustomize build DIR` in-process.
func kustomizeYAML(t testing.TB, dir string) string {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := rm.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// kustomizeBuild runs `kustomize build k8s` in-process and strictly decodes the output.
func kustomizeBuild(t *testing.T) *rendered {
	t.Helper()
	r := &rendered{Case: renderCase{name: "k8s"}}
	for _, doc := range strings.Split(kustomizeYAML(t, k8sDir(t)), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		o, err := decodeStrict(doc)
		if err != nil {
			t.Fatalf("k8s: %v", err)
		}
		r.Objects = append(r.Objects, o)
	}
	return r
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Namespace  string   `json:"namespace"`
		Resources  []string `json:"resources"`
	}
	raw, err := os.ReadFile(filepath.Join(k8sDir(t), "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if k.Kind != "Kustomization" || k.Namespace != devNamespace {
		t.Errorf("kind %q namespace %q", k.Kind, k.Namespace)
	}
	files, err := filepath.Glob(filepath.Join(k8sDir(t), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var manifests []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			manifests = append(manifests, b)
		}
	}
	listed := slices.Clone(k.Resources)
	slices.Sort(listed)
	if !slices.Equal(listed, manifests) {
		t.Errorf("kustomization resources %v, files %v: every manifest must be listed", listed, manifests)
	}
	// Each file also decodes strictly on its own, before kustomize touches it.
	for _, f := range manifests {
		raw, err := os.ReadFile(filepath.Join(k8sDir(t), f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(raw), "\n---\n") {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			if _, err := decodeStrict(doc); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}

func TestDevDependencies(t *testing.T) {
	r := kustomizeBuild(t)
	one[corev1.Namespace](t, r, devNamespace)
	for _, o := range r.Objects {
		if o.Kind != "Namespace" && o.Meta.Namespace != devNamespace {
			t.Errorf("%s %s in namespace %q, want %s", o.Kind, o.Name, o.Meta.Namespace, devNamespace)
		}
	}

	// Postgres: a StatefulSet with its headless Service, credentials and a volume per pod.
	pg := one[appsv1.StatefulSet](t, r, "postgres")
	pgPods := labels.Set(pg.Spec.Template.Labels)
	if sel, err := metav1.LabelSelectorAsSelector(pg.Spec.Selector); err != nil || !sel.Matches(pgPods) {
		t.Error("postgres selector does not match its pods")
	}
	headless := one[corev1.Service](t, r, pg.Spec.ServiceName)
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || !labels.SelectorFromSet(headless.Spec.Selector).Matches(pgPods) {
		t.Errorf("Service %s is not a headless Service of the postgres pods", headless.Name)
	}
	if len(pg.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("postgres: %d volumeClaimTemplates, want 1", len(pg.Spec.VolumeClaimTemplates))
	}
	claim := pg.Spec.VolumeClaimTemplates[0].Name
	c := pg.Spec.Template.Spec.Containers[0]
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == claim }) {
		t.Errorf("postgres does not mount its claim %s", claim)
	}
	if c.ReadinessProbe == nil {
		t.Error("postgres has no readiness probe")
	}
	var creds *corev1.Secret
	for _, ef := range c.EnvFrom {
		if ef.SecretRef != nil {
			creds = one[corev1.Secret](t, r, ef.SecretRef.Name)
		}
	}
	if creds == nil {
		t.Fatal("postgres reads no credentials Secret")
	}
	cred := func(k string) string {
		if v, ok := creds.StringData[k]; ok {
			return v
		}
		return string(creds.Data[k])
	}

	// Redis: a Deployment and its Service.
	rd := one[appsv1.Deployment](t, r, "redis")
	rdSvc := one[corev1.Service](t, r, "redis")
	if !labels.SelectorFromSet(rdSvc.Spec.Selector).Matches(labels.Set(rd.Spec.Template.Labels)) {
		t.Error("Service redis does not select the redis pods")
	}

	// values-dev.yaml points the chart at exactly these, and its NetworkPolicy peers
	// select them.
	dev := render(t, renderCase{name: "dev", file: "values-dev.yaml"})
	dbURL, err := url.Parse(dev.str("database.url"))
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := dbURL.User.Password()
	if dbURL.User.Username() != cred("POSTGRES_USER") || pass != cred("POSTGRES_PASSWORD") ||
		strings.TrimPrefix(dbURL.Path, "/") != cred("POSTGRES_DB") {
		t.Errorf("values-dev database.url %s does not use k8s/postgres.yaml's credentials", dbURL.Redacted())
	}
	checkServiceURL(t, dbURL, headless)
	redisURL, err := url.Parse(dev.str("redis.url"))
	if err != nil {
		t.Fatal(err)
	}
	checkServiceURL(t, redisURL, rdSvc)
	for which, podLabels := range map[string]labels.Set{"postgres": pgPods, "redis": labels.Set(rd.Spec.Template.Labels)} {
		peers := peersFromValues(t, dev.val("networkPolicy."+which+".to"))
		matched := false
		for _, p := range peers {
			if p.PodSelector != nil && p.NamespaceSelector == nil {
				sel, err := metav1.LabelSelectorAsSelector(p.PodSelector)
				matched = matched || (err == nil && sel.Matches(podLabels))
			}
		}
		if !matched {
			t.Errorf("values-dev networkPolicy.%s.to does not select the %s pods of k8s/", which, which)
		}
	}
}

// checkServiceURL asserts that a connection URL names svc by its cluster DNS name and port.
func checkServiceURL(t *testing.T, u *url.URL, svc *corev1.Service) {
	t.Helper()
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatalf("%s: %v", u.Redacted(), err)
	}
	if want := fmt.Sprintf("%s.%s.svc.cluster.local", svc.Name, devNamespace); host != want {
		t.Errorf("%s: host %s, want %s", u.Redacted(), host, want)
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return fmt.Sprint(p.Port) == port }) {
		t.Errorf("%s: Service %s has no port %s", u.Redacted(), svc.Name, port)
	}
}
