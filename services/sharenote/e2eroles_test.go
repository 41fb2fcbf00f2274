//go:build e2e

package sharenote_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/sharenote"
)

// targetRoles makes a login role of its own for each target on the test's database
// (<database>_<target>, loginRoles), has `sharenote migrate`, as the owner, grant each
// what its target needs (SHARE_DATABASE_ROLES), as the chart's migration hook does, and
// returns each target's database URL as its role.
func (st *stack) targetRoles(t *testing.T, databaseURL string) map[string]string {
	t.Helper()
	suffix := func(target string) string { return strings.ReplaceAll(target, "-", "_") }
	var suffixes, list []string
	for _, target := range routes.Targets {
		suffixes = append(suffixes, suffix(target))
	}
	made := loginRoles(t, databaseURL, suffixes...)
	urls := map[string]string{}
	st.roles = map[string]string{}
	want := map[string]string{}
	for _, target := range routes.Targets {
		r := made[suffix(target)]
		urls[target] = r.url
		st.roles[target] = r.name
		list = append(list, target+"="+r.name)
		if access := targetNeeds(t, target).Database; access != app.NoDatabase {
			want[r.name] = access.String()
		}
	}
	var res struct{ Granted map[string]string }
	st.runJSONWith(t, append(slices.Clone(st.env), "SHARE_DATABASE_ROLES="+strings.Join(list, ",")), &res, "migrate")
	if !maps.Equal(res.Granted, want) {
		t.Fatalf("migrate granted %v, want %v", res.Granted, want)
	}
	return urls
}

// targetNeeds are the needs of one target (app.Target.Needs).
func targetNeeds(t *testing.T, target string) app.Needs {
	t.Helper()
	for _, tg := range sharenote.Program.Targets {
		if tg.Name == target {
			return tg.Needs
		}
	}
	t.Fatalf("no target %s", target)
	return app.Needs{}
}

// targetConfig is one target's environment, as the chart gives a workload only the
// credentials its target needs: the database as the target's own role, Redis, and the
// object store's URL and keys only where it needs them.
func targetConfig(t *testing.T, target string, shared map[string]string, roleURL string) map[string]string {
	t.Helper()
	needs := targetNeeds(t, target)
	own := maps.Clone(shared)
	own["SHARE_DATABASE_URL"] = roleURL
	if needs.Database == app.NoDatabase {
		delete(own, "SHARE_DATABASE_URL")
	}
	if !needs.Redis {
		delete(own, "SHARE_REDIS_URL")
	}
	if !needs.ObjectStore {
		for k := range own {
			if k == "SHARE_BLOB_URL" || strings.HasPrefix(k, "AWS_") {
				delete(own, k)
			}
		}
	}
	return own
}

// checkSessions: the database's sessions, other than the owner's (the test's own), are
// those of the targets' roles, each target's own (the pools keep a connection from the
// readiness checks and the requests so far).
func (st *stack) checkSessions(t *testing.T) {
	if st.roles == nil {
		t.Skip("the services run elsewhere")
	}
	owner := openAs(t, st.databaseURL)
	var got []string
	if err := owner.Raw("SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = current_database() AND usename <> current_user ORDER BY 1").
		Scan(&got).Error; err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(maps.Values(st.roles))
	if !slices.Equal(got, want) {
		t.Errorf("sessions of %v on the database, want each target's own role: %v", got, want)
	}
}
