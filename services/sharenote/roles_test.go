package sharenote_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/sharenote"
)

// roles are two login roles an operator made for a test's database: reader for the
// targets that only read, writer for the others (loginRoles).
type roles struct {
	reader, writer       string
	readerURL, writerURL string
}

// newRoles creates the reader and writer roles for b's database (loginRoles).
func newRoles(t *testing.T, b testkit.Backend) roles {
	t.Helper()
	made := loginRoles(t, b.DatabaseURL, "reader", "writer")
	return roles{reader: made["reader"].name, writer: made["writer"].name,
		readerURL: made["reader"].url, writerURL: made["writer"].url}
}

// loginRole is a role made for a test's database, and the database's URL as that role.
type loginRole struct{ name, url string }

// loginRoles creates a login role <database>_<suffix> for each suffix on the Postgres
// server of databaseURL, as the operator would (the owner that migrates creates none):
// named after the database, because roles are cluster-wide, and dropped, with what they
// were granted, when the test ends. Call it before starting the processes that log in as
// them, so that they stop first.
func loginRoles(t *testing.T, databaseURL string, suffixes ...string) map[string]loginRole {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	owner := openAs(t, databaseURL)
	made := map[string]loginRole{}
	for _, suffix := range suffixes {
		role := strings.TrimPrefix(u.Path, "/") + "_" + suffix
		if err := owner.Exec("CREATE ROLE " + role + " LOGIN").Error; err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// The grants live in the test's database: revoke them there, then drop the role.
			if err := owner.Exec("DROP OWNED BY " + role).Error; err != nil {
				t.Errorf("drop owned by %s: %v", role, err)
			}
			if err := owner.Exec("DROP ROLE " + role).Error; err != nil {
				t.Errorf("drop role %s: %v", role, err)
			}
		})
		as := *u
		as.User = url.User(role)
		made[suffix] = loginRole{name: role, url: as.String()}
	}
	return made
}

// migrateWithRoles runs `sharenote migrate` granting the roles to the targets.
func migrateWithRoles(t *testing.T, b testkit.Backend, r roles) map[string]string {
	t.Helper()
	list := "og-renderer=" + r.reader + ",images=" + r.reader + ",auth=" + r.writer + ",publish=" + r.writer + ",notes=" + r.writer
	code, out, errOut := testkit.Run(t, b, sharenote.Program, map[string]string{"SHARE_DATABASE_ROLES": list}, "migrate")
	var res struct{ Granted map[string]string }
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
		t.Fatalf("migrate: exit %d, printed %q (%v): %s", code, out, err, errOut)
	}
	return res.Granted
}

// openAs opens the database as a role.
func openAs(t *testing.T, dbURL string) *gorm.DB {
	t.Helper()
	gdb, err := db.Open(context.Background(), dbURL, noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(gdb) })
	return gdb
}

// TestMigrateGrantsEachRoleWhatItsTargetsNeed: the reader role (og-renderer, images) may
// read every table, also one a later migration adds, and write none; the writer may
// write, also the later table and the serial ids.
func TestMigrateGrantsEachRoleWhatItsTargetsNeed(t *testing.T) {
	b := testkit.PostgresBackend(t)
	r := newRoles(t, b)
	if got := migrateWithRoles(t, b, r); got[r.reader] != "read-only" || got[r.writer] != "read-write" || len(got) != 2 {
		t.Errorf("granted %v, want %s read-only and %s read-write", got, r.reader, r.writer)
	}
	// A table a later migration adds, made by the owner, as migrate makes them.
	if err := testkit.OpenDB(t, b).Exec("CREATE TABLE later_table (id bigserial PRIMARY KEY, v text)").Error; err != nil {
		t.Fatal(err)
	}
	reader, writer := openAs(t, r.readerURL), openAs(t, r.writerURL)
	for _, table := range []string{"publications", "accounts", "later_table"} {
		var n int64
		if err := reader.Table(table).Count(&n).Error; err != nil {
			t.Errorf("the reader cannot read %s: %v", table, err)
		}
	}
	for _, stmt := range []string{"INSERT INTO later_table (v) VALUES ('x')", "UPDATE accounts SET display_name = display_name",
		"DELETE FROM sessions", "SELECT cuid FROM publications FOR UPDATE"} {
		if err := reader.Exec(stmt).Error; err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("the reader ran %s: %v, want permission denied", stmt, err)
		}
		if err := writer.Exec(stmt).Error; err != nil {
			t.Errorf("the writer cannot run %s: %v", stmt, err)
		}
	}
	code, _, errOut := testkit.Run(t, testkit.SQLiteBackend(t), sharenote.Program, map[string]string{"SHARE_DATABASE_ROLES": "images=x"}, "migrate")
	if code == 0 || !strings.Contains(errOut, "need Postgres") {
		t.Errorf("migrate with roles on SQLite: exit %d, %s; want a failure naming Postgres", code, errOut)
	}
}

// TestReadOnlyTargetsServeWithASelectOnlyRole runs the split deployment of
// TestPublicReadsNeverWriteAndAStaleRenderIsRedoneOnceByAWriter with og-renderer and
// images logged in as a role that may only SELECT, and the writing targets as the
// writer role: every public read works, also of a stale render, which the writers redo.
func TestReadOnlyTargetsServeWithASelectOnlyRole(t *testing.T) {
	b := testkit.PostgresBackend(t)
	r := newRoles(t, b)
	migrateWithRoles(t, b, r)
	publicReadsNeverWrite(t, b, r.readerURL, r.writerURL)
}
