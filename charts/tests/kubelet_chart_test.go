package tests

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/routes"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// kubeletValues are testdata/kubelet/values.yaml (the real-kubelet stage's, `make k8s-e2e
// KUBELET=1`) in one mode, with what that stage sets at install time: the image, the
// database, Redis and the object store.
func kubeletValues(t *testing.T, mode string, set map[string]any) map[string]any {
	t.Helper()
	v, err := chartutil.ReadValuesFile(filepath.Join("testdata", "kubelet", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	vals := v.AsMap()
	setPath(vals, "mode", mode)
	for k, val := range set {
		setPath(vals, k, val)
	}
	return vals
}

// kubeletStageValues are kubeletValues with sample addresses, for the static checks.
func kubeletStageValues(t *testing.T, mode string) map[string]any {
	t.Helper()
	set := map[string]any{"image.repository": "localhost/sharenote", "image.tag": "v0.0.0-test",
		"database.url": "postgres://postgres@127.0.0.1:5432/sharenote?sslmode=disable", "redis.url": "redis://127.0.0.1:6379/0",
		"objectStore.external.url": "s3://sharenote?endpoint=127.0.0.1:9000&region=us-east-1&tls=false"}
	for _, w := range append(slices.Clone(routes.Targets), "all-in-one") {
		set["database.workloads."+w+".url"] = "postgres://sharenote_" + strings.ReplaceAll(w, "-", "_") + "@127.0.0.1:5432/sharenote?sslmode=disable"
	}
	return kubeletValues(t, mode, set)
}

// TestHostNetworkGivesEachWorkloadItsPorts renders the real-kubelet stage's values (with
// the reaper on): every sharenote pod on its node's network, each workload listening on
// its own ports at the node's address (status.hostIP), its probes and Service following
// the named ports.
func TestHostNetworkGivesEachWorkloadItsPorts(t *testing.T) {
	for _, mode := range []string{"allInOne", "split"} {
		t.Run(mode, func(t *testing.T) {
			vals := kubeletStageValues(t, mode)
			setPath(vals, "reaper.enabled", true)
			r, err := renderErr(t, vals)
			if err != nil {
				t.Fatal(err)
			}
			r.Case.name = mode
			ports := r.val("hostNetwork.ports").(map[string]any)
			seen := map[int32]string{}
			for _, w := range r.workloads() {
				d := one[appsv1.Deployment](t, r, fullname(w))
				pod := d.Spec.Template.Spec
				if !pod.HostNetwork || pod.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
					t.Errorf("%s: hostNetwork %v, dnsPolicy %q; want true, ClusterFirstWithHostNet", w, pod.HostNetwork, pod.DNSPolicy)
				}
				c := pod.Containers[0]
				want := ports[w].(map[string]any)
				for _, name := range []string{"http", "admin"} {
					p := containerPort(c, name)
					if fmt.Sprint(p) != fmt.Sprint(want[name]) {
						t.Errorf("%s: port %s = %d, want %v", w, name, p, want[name])
					}
					if other, ok := seen[p]; ok {
						t.Errorf("%s: port %d is %s's too", w, p, other)
					}
					seen[p] = w + "." + name
				}
				// The listeners are at the node's address: HOST_IP, defined before the
				// variables that expand it.
				hostIP := -1
				for i, e := range c.Env {
					switch e.Name {
					case "HOST_IP":
						if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "status.hostIP" {
							t.Errorf("%s: HOST_IP is not status.hostIP: %+v", w, e)
						}
						hostIP = i
					case "SHARE_ADDR", "SHARE_ADMIN_ADDR":
						port := want["http"]
						if e.Name == "SHARE_ADMIN_ADDR" {
							port = want["admin"]
						}
						if e.Value != fmt.Sprintf("$(HOST_IP):%v", port) || hostIP < 0 || hostIP > i {
							t.Errorf("%s: %s=%q after HOST_IP at %d, want $(HOST_IP):%v after it", w, e.Name, e.Value, hostIP, port)
						}
					}
				}
				for which, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
					if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.StrVal != "admin" {
						t.Errorf("%s: %s probe does not use the named admin port", w, which)
					}
				}
				svc := one[corev1.Service](t, r, fullname(w))
				for _, sp := range svc.Spec.Ports {
					if sp.TargetPort.StrVal != sp.Name {
						t.Errorf("%s: Service port %s targets %s, not the container's named port", w, sp.Name, sp.TargetPort.String())
					}
				}
			}
			if job := one[batchv1.Job](t, r, fullname("migrate")); !job.Spec.Template.Spec.HostNetwork {
				t.Error("the migration Job is not on the host network")
			}
			if cj := one[batchv1.CronJob](t, r, fullname("reaper")); !cj.Spec.JobTemplate.Spec.Template.Spec.HostNetwork {
				t.Error("the reaper is not on the host network")
			}
		})
	}
}

// TestHostNetworkRefusesWhatCannotWork fails the render, in one line, where host
// networking cannot work as asked.
func TestHostNetworkRefusesWhatCannotWork(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]any
		want string
	}{
		{"with NetworkPolicies", map[string]any{"networkPolicy.enabled": true}, "hostNetwork.enabled: NetworkPolicies do not apply"},
		{"a workload without ports", nil, "hostNetwork.ports.notes: every workload needs its ports"},
		{"a port used twice", map[string]any{"hostNetwork.ports.images.admin": 19081}, "hostNetwork.ports: 19081 is used twice"},
		{"a port for no workload", map[string]any{"hostNetwork.ports.notess": map[string]any{"http": 1, "admin": 2}}, "hostNetwork.ports.notess is not a workload"},
		{"a port without its pair", map[string]any{"hostNetwork.ports.notes": map[string]any{"http": 18083}}, "admin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := kubeletStageValues(t, "split")
			if tc.set == nil {
				delete(vals["hostNetwork"].(map[string]any)["ports"].(map[string]any), "notes")
			}
			for k, v := range tc.set {
				setPath(vals, k, v)
			}
			_, err := renderErr(t, vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
