package tests

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/sharenote"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
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
				want := map[string]bool{databaseSecret(r, w): needs.Database != app.NoDatabase}
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

// perWorkload reports whether each workload has database credentials of its own.
func (r *rendered) perWorkload() bool { return r.val("database.perWorkloadCredentials") == true }

// databaseSecret is the Secret holding a workload's SHARE_DATABASE_URL: with
// perWorkloadCredentials its own (database.workloads.<w>.existingSecret, the chart's
// <release>-database-<w> for a url, else <database.existingSecret>-<w>), else the
// owner's, which every pod shares.
func databaseSecret(r *rendered, workload string) string {
	if !r.perWorkload() {
		return existingOr(r, "database")
	}
	entry := "database.workloads." + workload
	switch {
	case r.str(entry+".existingSecret") != "":
		return r.str(entry + ".existingSecret")
	case r.str(entry+".url") != "":
		return fullname("database-" + workload)
	}
	return r.str("database.existingSecret") + "-" + workload
}

// databaseRole is the role a workload logs in as with perWorkloadCredentials.
func databaseRole(r *rendered, workload string) string {
	if role := r.str("database.workloads." + workload + ".role"); role != "" {
		return role
	}
	return "sharenote_" + strings.ReplaceAll(workload, "-", "_")
}

// TestEachWorkloadHasDatabaseCredentialsOfItsOwn: with perWorkloadCredentials (the
// default) no two Deployments read one database Secret, none reads the owner's, and the
// migration hook, as the owner, grants every target's role (SHARE_DATABASE_ROLES); the
// reaper logs in as publish (the all-in-one). Without it every pod shares the owner's
// Secret and the migration grants nothing.
func TestEachWorkloadHasDatabaseCredentialsOfItsOwn(t *testing.T) {
	for _, rc := range renderCases {
		t.Run(rc.name, func(t *testing.T) {
			r := render(t, rc)
			owner := existingOr(r, "database")
			seen := map[string]string{}
			for _, w := range r.workloads() {
				d := one[appsv1.Deployment](t, r, fullname(w))
				got := envSecret(d.Spec.Template.Spec, "SHARE_DATABASE_URL")
				if !r.perWorkload() {
					if got != owner {
						t.Errorf("%s reads SHARE_DATABASE_URL from %q, want the shared %q", w, got, owner)
					}
					continue
				}
				if got == owner || seen[got] != "" {
					t.Errorf("%s reads SHARE_DATABASE_URL from %q, which the owner or %s reads too", w, got, seen[got])
				}
				seen[got] = w
			}
			job := one[batchv1.Job](t, r, fullname("migrate"))
			if got := envSecret(job.Spec.Template.Spec, "SHARE_DATABASE_URL"); got != owner && got != fullname("migrate") {
				t.Errorf("the migration reads SHARE_DATABASE_URL from %q, want the owner's", got)
			}
			var want []string
			for _, target := range routes.Targets {
				w := target
				if r.allInOne() {
					w = "all-in-one"
				}
				want = append(want, target+"="+databaseRole(r, w))
			}
			roles := strings.Join(want, ",")
			if !r.perWorkload() {
				roles = ""
			}
			if got := envValue(job.Spec.Template.Spec.Containers[0], "SHARE_DATABASE_ROLES"); got != roles {
				t.Errorf("the migration's SHARE_DATABASE_ROLES = %q, want %q", got, roles)
			}
			reaperFrom := "publish"
			if r.allInOne() {
				reaperFrom = "all-in-one"
			}
			cj := one[batchv1.CronJob](t, r, fullname("reaper"))
			if got, want := envSecret(cj.Spec.JobTemplate.Spec.Template.Spec, "SHARE_DATABASE_URL"), databaseSecret(r, reaperFrom); got != want {
				t.Errorf("the reaper reads SHARE_DATABASE_URL from %q, want %s's %q", got, reaperFrom, want)
			}
		})
	}
}

// envSecret is the Secret a pod's first container reads the variable name from.
func envSecret(pod corev1.PodSpec, name string) string {
	if ref := envSecretRef(pod.Containers[0], name); ref != nil {
		return ref.Name
	}
	return ""
}
