package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/config"
)

// runConfig runs `sharenote config args…` in the environment vars.
func runConfig(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	env := cli.Env{Getenv: func(k string) string { return vars[k] }, Stdout: &out, Stderr: &errOut}
	code = (app.Program{Name: "sharenote"}).Main(context.Background(), env, append([]string{"config"}, args...))
	return code, out.String(), errOut.String()
}

func TestConfigPrintMasksSecretsAndNamesSources(t *testing.T) {
	vars := map[string]string{
		"SHARE_ADDR":            "0.0.0.0:8080",
		"SHARE_DATABASE_URL":    "postgres://app:Pg-s3cret@db:5432/sharenote?sslmode=disable",
		"SHARE_REDIS_URL":       "rediss://default:Rd-s3cret@redis:6380/0",
		"AWS_ACCESS_KEY_ID":     "AKIA-s3cret",
		"AWS_SECRET_ACCESS_KEY": "Aws-s3cret",
	}
	code, out, errOut := runConfig(t, vars, "print")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if strings.Contains(out, "s3cret") {
		t.Fatalf("config print shows a secret:\n%s", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(config.Variables) {
		t.Errorf("%d lines, want one per setting (%d):\n%s", len(lines), len(config.Variables), out)
	}
	for _, want := range [][]string{
		{"SHARE_ADDR=0.0.0.0:8080", "# environment"},
		{"SHARE_PUBLIC_URL=http://localhost:8080", "# default"},
		{"SHARE_DATABASE_URL=postgres://app:xxxxx@db:5432/sharenote?sslmode=disable", "# environment"},
		{"SHARE_REDIS_URL=rediss://default:xxxxx@redis:6380/0", "# environment"},
		{"SHARE_REAP_INTERVAL=0s", "# default"},
		{"SHARE_MAX_UPLOADS=8", "# default"},
	} {
		if !hasLine(lines, want[0], want[1]) {
			t.Errorf("no line %q … %q in:\n%s", want[0], want[1], out)
		}
	}
}

func TestConfigPrintMarksBadValuesAndFails(t *testing.T) {
	code, out, errOut := runConfig(t, map[string]string{"SHARE_LOG_LEVEL": "loud", "SHARE_REDIS_URL": "memcached://:Rd-s3cret@cache"}, "print")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if strings.Contains(out+errOut, "s3cret") {
		t.Fatalf("config print shows a secret:\n%s%s", out, errOut)
	}
	lines := strings.Split(out, "\n")
	if !hasLine(lines, "SHARE_LOG_LEVEL=loud", "# environment, invalid") || !hasLine(lines, "SHARE_REDIS_URL=xxxxx", "# environment, invalid") {
		t.Errorf("bad values are not marked:\n%s", out)
	}
	if !strings.Contains(errOut, "SHARE_LOG_LEVEL") || !strings.Contains(errOut, "SHARE_REDIS_URL") {
		t.Errorf("stderr %q does not name the bad variables", errOut)
	}
}

func TestConfigVerifyListsEveryBadValue(t *testing.T) {
	bad := map[string]string{
		"SHARE_ADDR":            "nowhere",
		"SHARE_DATABASE_URL":    "mysql://app:Pg-s3cret@db/sharenote",
		"SHARE_TRUSTED_PROXIES": "10.0.0.0/99,ingress.local", // Two bad entries, two lines.
		"SHARE_LOG_LEVEL":       "loud",
		"SHARE_MAX_UPLOADS":     "0",
	}
	code, out, errOut := runConfig(t, bad, "verify")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if out != "" || strings.Contains(errOut, "s3cret") {
		t.Errorf("stdout %q, stderr %q; want nothing on stdout and no secret", out, errOut)
	}
	want := []string{
		`SHARE_ADDR="nowhere" is not host:port`,
		`SHARE_DATABASE_URL must be postgres://… or sqlite:<path>`,
		`SHARE_TRUSTED_PROXIES: "10.0.0.0/99" is not a CIDR or IP`,
		`SHARE_TRUSTED_PROXIES: "ingress.local" is not a CIDR or IP`,
		`SHARE_LOG_LEVEL="loud" is not debug, info, warn or error`,
		`SHARE_MAX_UPLOADS="0" is not a whole number from 1 to 10000`,
		`sharenote config: 5 invalid setting(s)`,
	}
	if got := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr:\n%s\nwant:\n%s", errOut, strings.Join(want, "\n"))
	}
}

func TestConfigVerifyAcceptsAGoodConfiguration(t *testing.T) {
	code, out, errOut := runConfig(t, map[string]string{"SHARE_ADDR": ":8080", "SHARE_PPROF": "true"}, "verify")
	want := fmt.Sprintf("configuration OK: %d settings, 2 from the environment\n", len(config.Variables))
	if code != 0 || errOut != "" || out != want {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestConfigRefusesAnUnknownSubcommand(t *testing.T) {
	for _, args := range [][]string{{}, {"show"}, {"print", "extra"}} {
		if code, _, errOut := runConfig(t, nil, args...); code != 2 || errOut == "" {
			t.Errorf("config %q: exit %d, stderr %q; want a usage error", args, code, errOut)
		}
	}
}

// hasLine reports whether a line starts with prefix and ends with suffix.
func hasLine(lines []string, prefix, suffix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix+" ") && strings.HasSuffix(l, suffix) {
			return true
		}
	}
	return false
}
