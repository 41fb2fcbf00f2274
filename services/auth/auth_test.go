package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/secret"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/auth"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var targets = []app.Target{auth.Target}

func login(t *testing.T, s *testkit.Server, key, instance string, header map[string]string) *testkit.Response {
	t.Helper()
	return s.Do(t, testkit.Request{Method: "POST", Path: "/api/auth/publish",
		JSON: map[string]string{"license_key": key, "instance_id": instance}, Header: header})
}

func createLicense(t *testing.T, s *testkit.Server, name string) account.Credentials {
	t.Helper()
	creds, err := s.App.Deps().Accounts.CreateLicense(context.Background(), name, name+"@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

func TestValidCredentialsGetATwoHourToken(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		clock := testkit.NewClock()
		s := testkit.StartServer(t, b, targets, testkit.WithClock(clock))
		creds := createLicense(t, s, "Ada")

		resp := login(t, s, creds.LicenseKey, creds.InstanceID, nil).Expect(t, http.StatusOK, "")
		var body struct {
			Token     string `json:"token"`
			ExpiresAt string `json:"expires_at"`
			UserCUID  string `json:"user_cuid"`
			User      struct{ Name, Email string }
		}
		resp.Decode(t, &body)
		if len(body.Token) < 43 {
			t.Errorf("token %q is shorter than 256 bits of base64", body.Token)
		}
		if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(body.ExpiresAt) {
			t.Errorf("expires_at %q is not RFC 3339 UTC with milliseconds", body.ExpiresAt)
		}
		want := clock.Now().Add(2 * time.Hour).UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		if body.ExpiresAt != want {
			t.Errorf("expires_at = %s, want %s", body.ExpiresAt, want)
		}
		if body.UserCUID != creds.UserCUID || body.User.Name != "Ada" || body.User.Email != "Ada@example.com" {
			t.Errorf("account = %+v, want %s Ada Ada@example.com", body, creds.UserCUID)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control = %q, want no-store", cc)
		}

		// The database holds the token only as its hash.
		var stored []string
		if err := testkit.OpenDB(t, b).Raw("SELECT token_hash FROM sessions").Scan(&stored).Error; err != nil {
			t.Fatal(err)
		}
		if len(stored) != 1 || stored[0] != secret.Hash(body.Token) || strings.Contains(stored[0], body.Token) {
			t.Errorf("sessions hold %q, want only the hash of the token", stored)
		}
	})
}

func TestEveryCredentialFailureIsTheSame401(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := testkit.StartServer(t, b, targets)
		mine := createLicense(t, s, "mine")
		other := createLicense(t, s, "other")
		revoked := createLicense(t, s, "revoked")
		if err := s.App.Deps().Accounts.Deactivate(context.Background(), revoked.LicenseKey); err != nil {
			t.Fatal(err)
		}
		cases := []struct{ name, key, instance string }{
			{"wrong key", "snk_wrong", mine.InstanceID},
			{"wrong instance", mine.LicenseKey, "sni_wrong"},
			{"another license's instance", mine.LicenseKey, other.InstanceID},
			{"deactivated license", revoked.LicenseKey, revoked.InstanceID},
			{"empty key", "", mine.InstanceID},
			{"empty instance", mine.LicenseKey, ""},
		}
		var first []byte
		for _, c := range cases {
			resp := login(t, s, c.key, c.instance, nil).Expect(t, http.StatusUnauthorized, "unauthorized")
			if first == nil {
				first = resp.Body
			}
			if !bytes.Equal(resp.Body, first) {
				t.Errorf("%s: body %s differs from %s", c.name, resp.Body, first)
			}
		}
	})
}

func TestBadRequestsGetClearErrors(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := testkit.StartServer(t, b, targets)
		cases := []struct {
			name        string
			body        string
			contentType string
			status      int
			code        string
			message     string // a part of the message, when it matters
		}{
			{"malformed JSON", `{"license_key":`, "application/json", 400, "invalid_body", "not valid JSON"},
			{"not an object", `["a"]`, "application/json", 400, "invalid_body", "not valid JSON"},
			{"two JSON values", `{} {}`, "application/json", 400, "invalid_body", "exactly one JSON value"},
			{"a stray bracket after the value", `{"license_key":"a","instance_id":"b"} ]`, "application/json", 400, "invalid_body", "exactly one JSON value"},
			{"field of the wrong type", `{"license_key":5,"instance_id":"x"}`, "application/json", 400, "invalid_field", "license_key"},
			{"not JSON at all", `license_key=a`, "application/x-www-form-urlencoded", 400, "unsupported_content_type", ""},
			{"body over 64 KiB", `{"license_key":"` + strings.Repeat("a", 70_000) + `"}`, "application/json", 413, "payload_too_large", ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				resp := s.Do(t, testkit.Request{Method: "POST", Path: "/api/auth/publish", Body: []byte(c.body), ContentType: c.contentType}).
					Expect(t, c.status, c.code)
				if !strings.Contains(string(resp.Body), c.message) {
					t.Errorf("body %s does not say %q", resp.Body, c.message)
				}
			})
		}
	})
}

func TestEleventhAuthenticationFromOneIPIsLimited(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := testkit.StartServer(t, b, targets)
		creds := createLicense(t, s, "limited")
		for i := 1; i <= 10; i++ {
			key := creds.LicenseKey
			if i%2 == 0 {
				key = "snk_wrong" // Failed attempts count too.
			}
			if resp := login(t, s, key, creds.InstanceID, nil); resp.Status == http.StatusTooManyRequests {
				t.Fatalf("request %d was limited", i)
			}
		}
		resp := login(t, s, creds.LicenseKey, creds.InstanceID, nil).Expect(t, http.StatusTooManyRequests, "rate_limited")
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 60 {
			t.Errorf("Retry-After = %q, want whole seconds in 1..60", resp.Header.Get("Retry-After"))
		}
	})
}

func TestForwardedForCountsOnlyFromTrustedProxies(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		t.Run("untrusted peer: header ignored", func(t *testing.T) {
			s := testkit.StartServer(t, b, targets)
			for i := range 10 {
				login(t, s, "k", "i", map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i)}).Expect(t, 401, "unauthorized")
			}
			login(t, s, "k", "i", map[string]string{"X-Forwarded-For": "198.51.100.99"}).Expect(t, 429, "rate_limited")
		})
		t.Run("trusted proxy: each client has its own budget", func(t *testing.T) {
			b := b
			if b.RedisPrefix != "" {
				b.RedisPrefix = testkit.NewRedisPrefix(t)
			}
			s := testkit.StartServer(t, b, targets, testkit.WithEnv("SHARE_TRUSTED_PROXIES", "127.0.0.1/32"))
			first := map[string]string{"X-Forwarded-For": "198.51.100.1"}
			for range 10 {
				login(t, s, "k", "i", first).Expect(t, 401, "unauthorized")
			}
			login(t, s, "k", "i", first).Expect(t, 429, "rate_limited")
			login(t, s, "k", "i", map[string]string{"X-Forwarded-For": "198.51.100.2"}).Expect(t, 401, "unauthorized")
			// A client cannot escape by prepending a forged hop: the rightmost untrusted
			// address is the client.
			login(t, s, "k", "i", map[string]string{"X-Forwarded-For": "203.0.113.7, 198.51.100.1"}).Expect(t, 429, "rate_limited")
		})
	})
}

func TestLicensesCommand(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		env := map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL}
		run := func(args ...string) (int, string, string) {
			var out, errOut bytes.Buffer
			code := (app.Program{Name: "sharenote", Commands: []cli.Command{auth.LicensesCommand}}).Main(context.Background(), cli.Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errOut}, args)
			return code, out.String(), errOut.String()
		}
		code, out, stderr := run("licenses", "create", "--name", "A", "--email", "a@example.com")
		if code != 0 {
			t.Fatalf("create: exit %d: %s", code, stderr)
		}
		var creds map[string]string
		if err := json.Unmarshal([]byte(out), &creds); err != nil || len(creds) != 3 ||
			creds["license_key"] == "" || creds["instance_id"] == "" || creds["user_cuid"] == "" {
			t.Fatalf("create printed %q, want {license_key, instance_id, user_cuid}", out)
		}

		s := testkit.StartServer(t, b, targets)
		login(t, s, creds["license_key"], creds["instance_id"], nil).Expect(t, 200, "")

		code, out, stderr = run("licenses", "add-instance", "--license", creds["license_key"], "--instance", "laptop-2")
		if code != 0 || !strings.Contains(out, `"instance_id":"laptop-2"`) || !strings.Contains(out, creds["user_cuid"]) {
			t.Fatalf("add-instance: exit %d, %q %s", code, out, stderr)
		}
		login(t, s, creds["license_key"], "laptop-2", nil).Expect(t, 200, "")
		if code, _, _ = run("licenses", "create", "--license", creds["license_key"], "--instance", "laptop-3"); code != 0 {
			t.Fatalf("create --license: exit %d", code)
		}
		login(t, s, creds["license_key"], "laptop-3", nil).Expect(t, 200, "")

		if code, out, stderr = run("licenses", "deactivate", "--license", creds["license_key"]); code != 0 || strings.Contains(out, creds["license_key"]) {
			t.Fatalf("deactivate: exit %d, %q %s", code, out, stderr)
		}
		login(t, s, creds["license_key"], creds["instance_id"], nil).Expect(t, 401, "unauthorized")

		for _, args := range [][]string{
			{"licenses"}, {"licenses", "create"}, {"licenses", "create", "--name", "x"}, {"licenses", "frobnicate"},
			{"licenses", "deactivate"}, {"licenses", "create", "--bogus"},
		} {
			if code, _, _ := run(args...); code != 2 {
				t.Errorf("%q: exit %d, want 2 (usage)", args, code)
			}
		}
		if code, _, stderr := run("licenses", "deactivate", "--license", "snk_unknown"); code != 1 || !strings.Contains(stderr, "not found") {
			t.Errorf("deactivate unknown: exit %d %q, want 1 and not found", code, stderr)
		}
	})
}
