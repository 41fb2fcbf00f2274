package tests

import (
	"maps"
	"slices"
	"testing"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/services/sharenote"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// workloadNeeds is what a workload's process needs: its target's needs (app.Target.Needs),
// every target's in the all-in-one.
func workloadNeeds(workload string) app.Needs {
	var targets []app.Target
	for _, t := range sharenote.Program.Targets {
		if workload == "all-in-one" || t.Name == workload {
			targets = append(targets, t)
		}
	}
	return app.Union(targets)
}

// podSecrets are the names of the Secrets a pod reads: through its containers' env and
// envFrom, and its volumes.
func podSecrets(pod corev1.PodSpec) []string {
	set := map[string]bool{}
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				set[e.ValueFrom.SecretKeyRef.Name] = true
			}
		}
		for _, ef := range c.EnvFrom {
			if ef.SecretRef != nil {
				set[ef.SecretRef.Name] = true
			}
		}
	}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			set[v.Secret.SecretName] = true
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					set[s.Secret.Name] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// TestDeploymentsCarryOnlyTheSecretsTheirTargetsNeed: each Deployment reads exactly the
// Secrets of what its target needs (docs/architecture.md "What each target needs"): the
// database's and Redis's, and the object store's only where the target needs the object
// store; an extra Secret (auth with S3 keys) fails, as does a missing one.
func TestDeploymentsCarryOnlyTheSecretsTheirTargetsNeed(t *testing.T) {
	for _, rc := range renderCases {
		t.Run(rc.name, func(t *testing.T) {
			r := render(t, rc)
			for _, w := range r.workloads() {
				d := one[appsv1.Deployment](t, r, fullname(w))
				needs := workloadNeeds(w)
				want := map[string]bool{existingOr(r, "database"): needs.Database != app.NoDatabase}
				if redisConfigured(r) {
					want[existingOr(r, "redis")] = want[existingOr(r, "redis")] || needs.Redis
				}
				if s := r.objectStoreSecret(); s != "" {
					want[s] = want[s] || needs.ObjectStore
				}
				var wanted []string
				for name, ok := range want {
					if ok {
						wanted = append(wanted, name)
					}
				}
				slices.Sort(wanted)
				if got := podSecrets(d.Spec.Template.Spec); !slices.Equal(got, wanted) {
					t.Errorf("%s reads the Secrets %q, want exactly %q (what %s needs: %+v)", d.Name, got, wanted, w, needs)
				}
			}
		})
	}
}

// existingOr is the Secret that holds a connection URL (which: database, redis): the
// values' existingSecret, else the chart's own.
func existingOr(r *rendered, which string) string {
	if s := r.str(which + ".existingSecret"); s != "" {
		return s
	}
	return releaseName
}
