package sharenote_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/sharenote"
)

// TestSitesReleaseHandle: `sharenote sites release-handle` lets another account take a
// handle its first account no longer uses, and refuses one a site has now or no one
// holds, on both backends.
func TestSitesReleaseHandle(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		first, second := s.NewAccount(t, "first"), s.NewAccount(t, "second")
		put := func(acc testkit.Account, handle string) *testkit.Response {
			return s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/site", Token: acc.Token, JSON: map[string]string{"handle": handle}})
		}
		release := func(handle string) (int, string) {
			var out, errOut bytes.Buffer
			env := map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL}
			code := sharenote.Program.Main(context.Background(), cli.Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errOut},
				[]string{"sites", "release-handle", handle})
			return code, out.String() + errOut.String()
		}
		put(first, "garden").Expect(t, http.StatusOK, "")
		put(first, "garden2").Expect(t, http.StatusOK, "")
		put(second, "garden").Expect(t, http.StatusBadRequest, "invalid_field")
		if code, out := release("garden2"); code == 0 || !strings.Contains(out, "current handle") {
			t.Fatalf("releasing a site's current handle: exit %d, %s; want a failure saying so", code, out)
		}
		if code, out := release("nobody"); code == 0 || !strings.Contains(out, "no account holds") {
			t.Fatalf("releasing a handle no one holds: exit %d, %s; want a failure saying so", code, out)
		}
		if code, out := release("Garden"); code != 0 || !strings.Contains(out, `"released"`) {
			t.Fatalf("releasing an old handle: exit %d, %s", code, out)
		}
		put(second, "garden").Expect(t, http.StatusOK, "")
	})
}
