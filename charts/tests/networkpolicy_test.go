package tests

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/sharenote/sharenote/libs/app"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// pod is one kind of pod the release runs, by its template labels.
type pod struct {
	name    string
	labels  labels.Set
	serving bool // a Deployment behind the Ingress
}

func releasePods(t *testing.T, r *rendered) []pod {
	t.Helper()
	var pods []pod
	for _, d := range all[appsv1.Deployment](r) {
		pods = append(pods, pod{d.Name, d.Spec.Template.Labels, true})
	}
	for _, j := range all[batchv1.Job](r) {
		pods = append(pods, pod{j.Name, j.Spec.Template.Labels, false})
	}
	for _, cj := range all[batchv1.CronJob](r) {
		pods = append(pods, pod{cj.Name, cj.Spec.JobTemplate.Spec.Template.Labels, false})
	}
	for _, ss := range all[appsv1.StatefulSet](r) {
		pods = append(pods, pod{ss.Name, ss.Spec.Template.Labels, false})
	}
	// helm test's Pod.
	for _, p := range all[corev1.Pod](r) {
		pods = append(pods, pod{p.Name, p.Labels, false})
	}
	return pods
}

// selecting returns the policies of a type (Ingress or Egress) that apply to a pod.
func selecting(t *testing.T, r *rendered, p pod, pt networkingv1.PolicyType) []*networkingv1.NetworkPolicy {
	t.Helper()
	var out []*networkingv1.NetworkPolicy
	for _, np := range all[networkingv1.NetworkPolicy](r) {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil {
			t.Fatalf("NetworkPolicy %s: %v", np.Name, err)
		}
		if sel.Matches(p.labels) && slices.Contains(np.Spec.PolicyTypes, pt) {
			out = append(out, np)
		}
	}
	return out
}

// peersFromValues decodes a list of NetworkPolicyPeer from the values (the chart copies
// them verbatim), so that a rule can be compared with what was configured.
func peersFromValues(t *testing.T, v any) []networkingv1.NetworkPolicyPeer {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var peers []networkingv1.NetworkPolicyPeer
	if err := yaml.UnmarshalStrict(b, &peers); err != nil {
		t.Fatal(err)
	}
	return peers
}

func portKey(p networkingv1.NetworkPolicyPort) string {
	proto := "TCP"
	if p.Protocol != nil {
		proto = string(*p.Protocol)
	}
	if p.Port == nil {
		return proto + "/any"
	}
	return fmt.Sprintf("%s/%s", proto, p.Port.String())
}

// testComponent is the component label of helm test's Pod (templates/tests/readyz.yaml).
const testComponent = "test"

// edgePeer is the edge's pods of the edge cases: a peer no other destination has.
var edgePeer = map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "edge"}}}

// edgeCases are installs with an edge (edge.purgeURLs) in split and all-in-one mode, its
// pods networkPolicy.edge.to.
var edgeCases = []renderCase{
	{name: "edge", file: "values.yaml", set: map[string]any{
		"edge.purgeURLs": []any{"http://varnish.edge:6081"}, "edge.addresses": []any{"10.42.7.0/24"}, "networkPolicy.edge.to": []any{edgePeer}}},
	{name: "allInOne-edge", file: "values.yaml", set: map[string]any{"mode": "allInOne",
		"edge.purgeURLs": []any{"http://varnish.edge:6081"}, "edge.addresses": []any{"10.42.7.0/24"}, "networkPolicy.edge.to": []any{edgePeer}}},
}

func TestNetworkPoliciesAllowOnlyWhatSharenoteNeeds(t *testing.T) {
	forCases(t, append(slices.Clone(renderCases), edgeCases...), func(t *testing.T, r *rendered) {
		if r.val("networkPolicy.enabled") != true {
			t.Skip("networkPolicy disabled")
		}
		pods := releasePods(t, r)
		if len(pods) < 3 {
			t.Fatalf("pods %v: want the Deployments, the migration and the reaper", pods)
		}
		np := func(path string) any { return r.val("networkPolicy." + path) }

		// Expected egress, by destination: DNS on UDP and TCP, Postgres, Redis, the object
		// store (the bundled MinIO's pods on 9000, else what the values allow), the
		// collector, the edge, and the extra rules; each pod gets those it uses (egressUses).
		dests := map[string]map[string][]networkingv1.NetworkPolicyPeer{}
		addTo := func(dest, proto string, ports any, to []networkingv1.NetworkPolicyPeer) {
			if dests[dest] == nil {
				dests[dest] = map[string][]networkingv1.NetworkPolicyPeer{}
			}
			for _, p := range ports.([]any) {
				dests[dest][fmt.Sprintf("%s/%v", proto, p)] = to
			}
		}
		addTo("dns", "UDP", np("dns.ports"), peersFromValues(t, np("dns.to")))
		for _, d := range []string{"dns", "postgres", "redis", "objectStore", "otel", "edge"} {
			addTo(d, "TCP", np(d+".ports"), peersFromValues(t, np(d+".to")))
		}
		if r.str("objectStore.type") == "bundled" {
			minio := one[appsv1.StatefulSet](t, r, fullname(minioComponent))
			dests["objectStore"] = map[string][]networkingv1.NetworkPolicyPeer{fmt.Sprintf("TCP/%d", minioPort): {{PodSelector: minio.Spec.Selector}}}
		}
		var extra []networkingv1.NetworkPolicyEgressRule
		b, _ := yaml.Marshal(np("extraEgress"))
		if err := yaml.UnmarshalStrict(b, &extra); err != nil {
			t.Fatal(err)
		}
		dests["extra"] = map[string][]networkingv1.NetworkPolicyPeer{}
		for _, rule := range extra {
			for _, p := range rule.Ports {
				dests["extra"][portKey(p)] = append(dests["extra"][portKey(p)], rule.To...)
			}
		}

		// Who may reach the bundled MinIO: the release's pods, and only they.
		releaseLabels := map[string]string{"app.kubernetes.io/name": "sharenote", "app.kubernetes.io/instance": releaseName}
		releasePeers := []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: releaseLabels}}}
		// helm test's Pod asks the serving pods' admin port, and nothing else gets it that way.
		helmTest := r.val("tests.enabled") == true
		testPeer := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			"app.kubernetes.io/name": "sharenote", "app.kubernetes.io/instance": releaseName, "app.kubernetes.io/component": testComponent}}}
		servingPeer := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: releaseLabels,
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app.kubernetes.io/component", Operator: metav1.LabelSelectorOpIn, Values: r.workloads()}}}}
		if got := len(all[corev1.Pod](r)); helmTest != (got == 1) {
			t.Errorf("tests.enabled %v, %d test Pods", helmTest, got)
		}
		for _, p := range pods {
			// Isolated both ways: some policy of each type selects every pod of the release.
			in, out := selecting(t, r, p, networkingv1.PolicyTypeIngress), selecting(t, r, p, networkingv1.PolicyTypeEgress)
			if len(in) == 0 || len(out) == 0 {
				t.Errorf("%s: not isolated (ingress policies %d, egress policies %d)", p.name, len(in), len(out))
				continue
			}

			// Ingress: the ingress controller on 8080 and monitoring on 9090 to the serving
			// pods; nothing at all to the migration and reaper pods.
			gotIn := map[string][]networkingv1.NetworkPolicyPeer{}
			for _, pol := range in {
				for _, rule := range pol.Spec.Ingress {
					if len(rule.From) == 0 {
						t.Errorf("%s: policy %s admits every source", p.name, pol.Name)
					}
					if len(rule.Ports) == 0 {
						t.Errorf("%s: policy %s admits every port", p.name, pol.Name)
					}
					for _, port := range rule.Ports {
						gotIn[portKey(port)] = append(gotIn[portKey(port)], rule.From...)
					}
				}
			}
			wantIn := map[string][]networkingv1.NetworkPolicyPeer{}
			wantOut := map[string][]networkingv1.NetworkPolicyPeer{}
			for _, d := range egressUses(r, p) {
				for k, v := range dests[d] {
					wantOut[k] = append(slices.Clone(wantOut[k]), v...)
				}
			}
			if p.labels["app.kubernetes.io/component"] == minioComponent {
				// The bundled MinIO: its S3 port to the release's pods; nothing out.
				wantIn[fmt.Sprintf("TCP/%d", minioPort)] = releasePeers
			}
			if p.serving {
				if peers := peersFromValues(t, np("ingressController")); len(peers) > 0 {
					wantIn["TCP/8080"] = peers
				}
				if peers := peersFromValues(t, np("monitoring")); len(peers) > 0 {
					wantIn["TCP/9090"] = peers
				}
				if helmTest {
					wantIn["TCP/9090"] = append(wantIn["TCP/9090"], testPeer)
				}
			}
			if p.labels["app.kubernetes.io/component"] == testComponent {
				wantOut["TCP/9090"] = []networkingv1.NetworkPolicyPeer{servingPeer}
			}
			comparePorts(t, p.name+" ingress", gotIn, wantIn)

			gotOut := map[string][]networkingv1.NetworkPolicyPeer{}
			for _, pol := range out {
				for _, rule := range pol.Spec.Egress {
					if len(rule.Ports) == 0 {
						t.Errorf("%s: policy %s lets every port out", p.name, pol.Name)
					}
					for _, port := range rule.Ports {
						gotOut[portKey(port)] = append(gotOut[portKey(port)], rule.To...)
					}
				}
			}
			comparePorts(t, p.name+" egress", gotOut, wantOut)
		}
	})
}

// egressUses are the destinations a pod of the release may reach (keys of networkPolicy,
// and "extra" for extraEgress), as docs/architecture.md "What each target needs" says: a
// serving workload what its target needs, the collector when tracing is on, and the edge
// when one is configured and its target sends the purges (app.JobPurge); the migration
// Postgres and the object store (it copies older bytes); the reaper what publish uses
// but the edge; the bundled bucket's Job the MinIO; helm test's Pod DNS (and the admin
// ports); the MinIO nothing.
func egressUses(r *rendered, p pod) []string {
	c := p.labels["app.kubernetes.io/component"]
	otel := r.str("otel.endpoint") != ""
	edge := len(asList(r.val("edge.purgeURLs"))) > 0
	extra := len(asList(r.val("networkPolicy.extraEgress"))) > 0
	var uses []string
	add := func(ok bool, d ...string) {
		if ok {
			uses = append(uses, d...)
		}
	}
	switch {
	case p.serving:
		n := workloadNeeds(c)
		add(true, "dns")
		add(n.Database != app.NoDatabase, "postgres")
		add(n.Redis && redisConfigured(r), "redis")
		add(n.ObjectStore, "objectStore")
		add(otel, "otel")
		add(edge && slices.Contains(n.Jobs, app.JobPurge), "edge")
		add(extra, "extra")
	case c == "migration":
		add(true, "dns", "postgres", "objectStore")
		add(extra, "extra")
	case c == "reaper":
		add(true, "dns", "postgres")
		add(redisConfigured(r), "redis")
		add(true, "objectStore")
		add(otel, "otel")
		add(extra, "extra")
	case c == "minio-bucket":
		add(true, "dns", "objectStore")
	case c == testComponent:
		add(true, "dns")
	}
	return uses
}

// TestNetworkPoliciesOpenTheEdgeToThePurgingWorkloadsOnly: with an edge, the pods that
// send the purges (publish and notes, or the all-in-one) may reach networkPolicy.edge's
// ports and peers; auth, images, og-renderer, the reaper, the migration and the other
// pods may not. Without an edge no pod may.
func TestNetworkPoliciesOpenTheEdgeToThePurgingWorkloadsOnly(t *testing.T) {
	noEdge := renderCase{name: "no edge", file: "values.yaml", set: map[string]any{"networkPolicy.edge.to": []any{edgePeer}}}
	purging := map[string][]string{"edge": {"notes", "publish"}, "allInOne-edge": {"all-in-one"}, "no edge": nil}
	forCases(t, append(slices.Clone(edgeCases), noEdge), func(t *testing.T, r *rendered) {
		peers := peersFromValues(t, []any{edgePeer})
		var reaching []string
		for _, p := range releasePods(t, r) {
			got := map[string][]networkingv1.NetworkPolicyPeer{}
			for _, pol := range selecting(t, r, p, networkingv1.PolicyTypeEgress) {
				for _, rule := range pol.Spec.Egress {
					if reflect.DeepEqual(rule.To, peers) {
						for _, port := range rule.Ports {
							got[portKey(port)] = rule.To
						}
					}
				}
			}
			if len(got) == 0 {
				continue
			}
			reaching = append(reaching, p.labels["app.kubernetes.io/component"])
			comparePorts(t, p.name+" egress to the edge", got, map[string][]networkingv1.NetworkPolicyPeer{"TCP/80": peers, "TCP/6081": peers})
		}
		if want := purging[r.Case.name]; !slices.Equal(slices.Sorted(slices.Values(reaching)), want) {
			t.Errorf("the pods that may reach the edge: %v, want %v", reaching, want)
		}
	})
}

// asList is a values list, or nil.
func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// comparePorts asserts the same ports are open, each to exactly the configured peers.
func comparePorts(t *testing.T, what string, got, want map[string][]networkingv1.NetworkPolicyPeer) {
	t.Helper()
	keys := func(m map[string][]networkingv1.NetworkPolicyPeer) []string {
		var k []string
		for p := range m {
			k = append(k, p)
		}
		sort.Strings(k)
		return k
	}
	if !slices.Equal(keys(got), keys(want)) {
		t.Errorf("%s: open ports %v, want %v", what, keys(got), keys(want))
		return
	}
	show := func(peers []networkingv1.NetworkPolicyPeer) string {
		if len(peers) == 0 {
			return "any destination\n"
		}
		b, _ := yaml.Marshal(peers)
		return string(b)
	}
	for port, peers := range want {
		g, w := show(got[port]), show(peers)
		if g != w {
			t.Errorf("%s on %s: peers\n%s\nwant\n%s", what, port, g, w)
		}
	}
}
