package app_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/outbox"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
)

// withCredentials adds a password and an sslpassword (which a trusting test Postgres
// ignores) to a Postgres URL of the tests.
func withCredentials(t *testing.T, database string) string {
	t.Helper()
	u, ok := strings.CutPrefix(database, "postgres://postgres@")
	if !ok {
		t.Fatalf("test database URL %q has no user postgres", database)
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return "postgres://postgres:Pg-s3cret@" + u + sep + "sslpassword=Key-s3cret"
}

func TestConfigPrintRedactsEveryURLSetting(t *testing.T) {
	vars := map[string]string{
		"SHARE_DATABASE_URL":    "postgres://app:Pg-s3cret@db/sharenote?sslmode=verify-full&sslpassword=Key-s3cret",
		"SHARE_REDIS_URL":       "redis://:Rd-s3cret@redis:6379/0",
		"SHARE_BLOB_URL":        "s3://AKIAEXAMPLE:Aws-s3cret@media?endpoint=minio:9000&secret_access_key=Sk-s3cret",
		"SHARE_EDGE_PURGE_URLS": "http://purger:Edge-s3cret@varnish-a:6081,http://varnish-b:6081/?token=Tok-s3cret",
		"SHARE_EDGE_ADDRESSES":  "10.0.9.0/24",
	}
	code, out, errOut := runConfig(t, vars, "print")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if strings.Contains(out, "s3cret") {
		t.Fatalf("config print shows a credential:\n%s", out)
	}
	lines := strings.Split(out, "\n")
	for _, want := range []string{
		"SHARE_DATABASE_URL=postgres://app:xxxxx@db/sharenote?sslmode=verify-full&sslpassword=xxxxx",
		"SHARE_BLOB_URL=s3://AKIAEXAMPLE:xxxxx@media?endpoint=minio:9000&secret_access_key=xxxxx",
		"SHARE_EDGE_PURGE_URLS=http://purger:xxxxx@varnish-a:6081,http://varnish-b:6081/?token=xxxxx",
	} {
		if !hasLine(lines, want, "# environment") {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}
}

// TestStartLineAndPurgeErrorsShowNoCredential runs a server whose database URL has a
// password and an sslpassword, whose object store URL has a secret and whose edge purge
// URLs have a password and a token: neither its start-up line nor the purge job's errors
// (one edge refuses purges, the other does not answer) show any of them.
func TestStartLineAndPurgeErrorsShowNoCredential(t *testing.T) {
	refusing, down := testkit.BrokenEdges(t)
	b := testkit.Backend{Name: "postgres", DatabaseURL: testkit.NewPostgresDB(t)}
	purging := app.Target{Name: routes.Notes, Needs: app.Needs{Database: app.ReadWrite, ChangeFeed: true, Jobs: []string{app.JobPurge}},
		New: func(app.Deps) (app.Parts, error) {
			handlers := app.Handlers{}
			for _, r := range routes.ForTarget(routes.Notes) {
				handlers[r] = func(c *gin.Context) { c.Status(http.StatusNotImplemented) }
			}
			return app.Parts{Handlers: handlers}, nil
		}}
	s := testkit.StartServer(t, testkit.Backend{Name: b.Name, DatabaseURL: withCredentials(t, b.DatabaseURL)}, []app.Target{purging}, noDrain,
		testkit.WithEnv("SHARE_BLOB_URL", "s3://AKIAEXAMPLE:Aws-s3cret@media?endpoint=127.0.0.1:1&secret_access_key=Sk-s3cret"),
		testkit.WithEnv("SHARE_EDGE_PURGE_URLS", "http://purger:Edge-s3cret@"+down+",http://"+refusing+"/?token=Tok-s3cret"),
		testkit.WithEnv("SHARE_EDGE_ADDRESSES", "127.0.0.1"))
	gdb := testkit.OpenDB(t, b)
	if err := gdb.Transaction(func(tx *gorm.DB) error {
		return outbox.NewWriter(time.Now, "", true).Write(tx, note.Change{Account: "A", Note: "n1", References: true})
	}); err != nil {
		t.Fatal(err)
	}
	s.Logs.Await(t, "the purge job's error", func(l string) bool { return strings.Contains(l, `"job":"purge"`) })
	logs := s.Logs.String()
	if !strings.Contains(logs, `"msg":"serving"`) {
		t.Fatalf("no start-up line in the log:\n%s", logs)
	}
	if strings.Contains(logs, "s3cret") {
		t.Fatalf("the log shows a credential:\n%s", logs)
	}
}
