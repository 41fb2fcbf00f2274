//go:build k8se2e

package tests

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/routes"
)

// workloadRole is a workload's login role on the stage's database and the URL as it.
type workloadRole struct{ name, url string }

// kubeletRoles creates, as the operator would, a login role for each workload of mode
// on the Postgres server of databaseURL (the owner's): <database>_<workload>, named after
// the test's database because roles are cluster-wide, and dropped, with what they were
// granted, when the test ends. The chart's migration hook grants them
// (SHARE_DATABASE_ROLES); each Deployment logs in as its own.
func kubeletRoles(t *testing.T, databaseURL, mode string) map[string]workloadRole {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	owner := openOwner(t, databaseURL)
	defer db.Close(owner)
	workloads := []string{"all-in-one"}
	if mode != "allInOne" {
		workloads = slices.Clone(routes.Targets)
	}
	made := map[string]workloadRole{}
	for _, w := range workloads {
		role := strings.TrimPrefix(u.Path, "/") + "_" + strings.ReplaceAll(w, "-", "_")
		if err := owner.Exec("CREATE ROLE " + role + " LOGIN").Error; err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			owner := openOwner(t, databaseURL)
			defer db.Close(owner)
			for _, stmt := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
				if err := owner.Exec(stmt).Error; err != nil {
					t.Errorf("%s: %v", stmt, err)
				}
			}
		})
		as := *u
		as.User = url.User(role)
		made[w] = workloadRole{name: role, url: as.String()}
	}
	return made
}

// sessionRoles are the roles with a session on the database of databaseURL, sorted.
func sessionRoles(t *testing.T, databaseURL string) []string {
	t.Helper()
	owner := openOwner(t, databaseURL)
	defer db.Close(owner)
	var names []string
	if err := owner.Raw("SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY 1").
		Scan(&names).Error; err != nil {
		t.Fatal(err)
	}
	return names
}

// openOwner opens the database as its owner; the caller closes it, so that no session of
// the owner outlives what it did.
func openOwner(t *testing.T, databaseURL string) *gorm.DB {
	t.Helper()
	owner, err := db.Open(context.Background(), databaseURL, noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	return owner
}
