package config_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/routes"
)

// env is a map-backed getenv.
func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func load(t *testing.T, vars map[string]string) config.Config {
	t.Helper()
	c, err := config.Load(env(vars))
	if err != nil {
		t.Fatalf("Load(%v): %v", vars, err)
	}
	return c
}

func TestLoadDefaults(t *testing.T) {
	want := config.Config{
		Addr:                 "127.0.0.1:8080",
		AdminAddr:            "127.0.0.1:9090",
		PublicURL:            "http://127.0.0.1:8080",
		DataDir:              "./.data",
		DatabaseURL:          "sqlite:.data/sharenote.db",
		BlobURL:              "file://.data/blobs",
		RedisURL:             "",
		RedisKeyPrefix:       "sharenote:",
		TrustedProxies:       nil,
		LogLevel:             slog.LevelInfo,
		ShutdownTimeout:      20 * time.Second,
		DrainDelay:           5 * time.Second, // Without a preStop sleep, the process waits itself.
		Pprof:                false,
		ReapInterval:         10 * time.Minute, // The embedded default has no CronJob.
		UnpublishedRetention: 7 * 24 * time.Hour,
		ImageQuotaBytes:      1_000_000_000,
		CacheBytes:           64 << 20,
		MaxUploads:           8,
		UploadWait:           30 * time.Second,
		EdgeMaxAge:           time.Hour,
		SiteReservedHandles:  []string{"api", "s", "assets", "admin", "www", "help"},
		Targets:              routes.Targets, // all
	}
	if got := load(t, nil); !reflect.DeepEqual(got, want) {
		t.Fatalf("Load with an empty environment:\n got %+v\nwant %+v", got, want)
	}
}

func TestLoadReadsExactlyTheDocumentedVariables(t *testing.T) {
	read := map[string]bool{}
	if _, err := config.Load(func(name string) string { read[name] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, v := range config.Variables {
		documented = append(documented, v.Name)
		if !read[v.Name] {
			t.Errorf("%s is documented in Variables but Load never reads it", v.Name)
		}
	}
	for name := range read {
		if !slices.Contains(documented, name) {
			t.Errorf("Load reads %s, which Variables does not document", name)
		}
	}
}

// settingCases are the rules of TestLoadSettings: each sets variables and checks a field.
var settingCases = []struct {
	name  string
	vars  map[string]string
	check func(c config.Config) (got, want any)
}{
	{"a listener on every interface gets a localhost public URL",
		map[string]string{"SHARE_ADDR": ":8080"},
		func(c config.Config) (any, any) { return c.PublicURL, "http://localhost:8080" }},
	{"a 0.0.0.0 listener gets a localhost public URL",
		map[string]string{"SHARE_ADDR": "0.0.0.0:8081"},
		func(c config.Config) (any, any) { return c.PublicURL, "http://localhost:8081" }},
	{"an IPv6 wildcard listener gets a localhost public URL",
		map[string]string{"SHARE_ADDR": "[::]:8082"},
		func(c config.Config) (any, any) { return c.PublicURL, "http://localhost:8082" }},
	{"an IPv6 listener keeps its brackets in the public URL",
		map[string]string{"SHARE_ADDR": "[::1]:8083"},
		func(c config.Config) (any, any) { return c.PublicURL, "http://[::1]:8083" }},
	{"an explicit public URL wins over the listener",
		map[string]string{"SHARE_ADDR": ":8080", "SHARE_PUBLIC_URL": "https://share.example.com"},
		func(c config.Config) (any, any) { return c.PublicURL, "https://share.example.com" }},
	{"a trailing slash is trimmed from the public URL",
		map[string]string{"SHARE_PUBLIC_URL": "https://share.example.com/"},
		func(c config.Config) (any, any) { return c.PublicURL, "https://share.example.com" }},
	{"every trailing slash is trimmed from a public URL with a path",
		map[string]string{"SHARE_PUBLIC_URL": "https://example.com/share//"},
		func(c config.Config) (any, any) { return c.PublicURL, "https://example.com/share" }},
	{"the default database lives in the data dir",
		map[string]string{"SHARE_DATA_DIR": "/var/lib/sharenote"},
		func(c config.Config) (any, any) { return c.DatabaseURL, "sqlite:/var/lib/sharenote/sharenote.db" }},
	{"an explicit database URL wins over the data dir",
		map[string]string{"SHARE_DATA_DIR": "/var/lib/sharenote", "SHARE_DATABASE_URL": "postgres://app@db/sharenote"},
		func(c config.Config) (any, any) { return c.DatabaseURL, "postgres://app@db/sharenote" }},
	{"postgresql:// is a Postgres URL too",
		map[string]string{"SHARE_DATABASE_URL": "postgresql://app@db/sharenote"},
		func(c config.Config) (any, any) { return c.DatabaseURL, "postgresql://app@db/sharenote" }},
	{"rediss:// is accepted for TLS",
		map[string]string{"SHARE_REDIS_URL": "rediss://r:6380/0"},
		func(c config.Config) (any, any) { return c.RedisURL, "rediss://r:6380/0" }},
	{"surrounding spaces are ignored",
		map[string]string{"SHARE_LOG_LEVEL": " debug ", "SHARE_ADDR": " 127.0.0.1:1234 "},
		func(c config.Config) (any, any) {
			return []any{c.LogLevel, c.Addr}, []any{slog.LevelDebug, "127.0.0.1:1234"}
		}},
	{"a blank variable means its default",
		map[string]string{"SHARE_ADMIN_ADDR": "   "},
		func(c config.Config) (any, any) { return c.AdminAddr, "127.0.0.1:9090" }},
	{"log levels are case-insensitive",
		map[string]string{"SHARE_LOG_LEVEL": "WARN"},
		func(c config.Config) (any, any) { return c.LogLevel, slog.LevelWarn }},
	{"the shutdown timeout is a Go duration",
		map[string]string{"SHARE_SHUTDOWN_TIMEOUT": "1m30s"},
		func(c config.Config) (any, any) { return c.ShutdownTimeout, 90 * time.Second }},
	{"the drain delay can be turned off where a preStop sleep covers it",
		map[string]string{"SHARE_DRAIN_DELAY": "0"},
		func(c config.Config) (any, any) { return c.DrainDelay, time.Duration(0) }},
	{"the drain delay is a Go duration",
		map[string]string{"SHARE_DRAIN_DELAY": "1500ms"},
		func(c config.Config) (any, any) { return c.DrainDelay, 1500 * time.Millisecond }},
	{"pprof is served only when asked for",
		map[string]string{"SHARE_PPROF": "true"},
		func(c config.Config) (any, any) { return c.Pprof, true }},
	{"pprof can be turned off explicitly",
		map[string]string{"SHARE_PPROF": "false"},
		func(c config.Config) (any, any) { return c.Pprof, false }},
	{"the unpublished retention is a Go duration",
		map[string]string{"SHARE_UNPUBLISHED_RETENTION": "36h"},
		func(c config.Config) (any, any) { return c.UnpublishedRetention, 36 * time.Hour }},
	{"the unpublished retention may be given in days",
		map[string]string{"SHARE_UNPUBLISHED_RETENTION": "30d"},
		func(c config.Config) (any, any) { return c.UnpublishedRetention, 30 * 24 * time.Hour }},
	{"the image quota can be lowered",
		map[string]string{"SHARE_IMAGE_QUOTA_BYTES": "5000000"},
		func(c config.Config) (any, any) { return c.ImageQuotaBytes, int64(5_000_000) }},
	{"Postgres leaves reaping to the CronJob",
		map[string]string{"SHARE_DATABASE_URL": "postgres://db/sharenote"},
		func(c config.Config) (any, any) { return c.ReapInterval, time.Duration(0) }},
	{"the reap interval can be set",
		map[string]string{"SHARE_DATABASE_URL": "postgres://db/sharenote", "SHARE_REAP_INTERVAL": "1h"},
		func(c config.Config) (any, any) { return c.ReapInterval, time.Hour }},
	{"the redis key prefix can be changed",
		map[string]string{"SHARE_REDIS_KEY_PREFIX": "staging:"},
		func(c config.Config) (any, any) { return c.RedisKeyPrefix, "staging:" }},
}

func TestLoadSettings(t *testing.T) {
	for _, tc := range settingCases {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := tc.check(load(t, tc.vars)); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
}

func TestLoadTrustedProxies(t *testing.T) {
	c := load(t, map[string]string{"SHARE_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.7 ,::1,,10.1.2.3/16, fd00::/8"})
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("192.168.1.7/32"), // A bare IP is a single-address network.
		netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("10.1.0.0/16"), // Host bits are masked off.
		netip.MustParsePrefix("fd00::/8"),
	}
	if !reflect.DeepEqual(c.TrustedProxies, want) {
		t.Fatalf("TrustedProxies = %v, want %v", c.TrustedProxies, want)
	}
	wantStrings := []string{"10.0.0.0/8", "192.168.1.7/32", "::1/128", "10.1.0.0/16", "fd00::/8"}
	if got := c.TrustedProxyStrings(); !reflect.DeepEqual(got, wantStrings) {
		t.Fatalf("TrustedProxyStrings = %v, want %v", got, wantStrings)
	}
}

func TestLoadRejectsInvalidValues(t *testing.T) {
	cases := []struct {
		name, variable, value string
	}{
		{"an unknown target is rejected", "SHARE_TARGETS", "notes,comments"},
		{"a listener without a port is rejected", "SHARE_ADDR", "8080"},
		{"an admin listener without a port is rejected", "SHARE_ADMIN_ADDR", "localhost"},
		{"a public URL without a scheme is rejected", "SHARE_PUBLIC_URL", "share.example.com"},
		{"a public URL that is not http(s) is rejected", "SHARE_PUBLIC_URL", "ftp://share.example.com"},
		{"a public URL without a host is rejected", "SHARE_PUBLIC_URL", "http://"},
		{"a database URL of another scheme is rejected", "SHARE_DATABASE_URL", "mysql://app@db/sharenote"},
		{"a bare database path is rejected", "SHARE_DATABASE_URL", "/var/lib/sharenote.db"},
		{"a redis URL of another scheme is rejected", "SHARE_REDIS_URL", "http://127.0.0.1:6379"},
		{"a redis address without a scheme is rejected", "SHARE_REDIS_URL", "127.0.0.1:6379"},
		{"a CIDR with too many bits is rejected", "SHARE_TRUSTED_PROXIES", "10.0.0.0/8,10.0.0.0/33"},
		{"a host name is not a trusted proxy", "SHARE_TRUSTED_PROXIES", "ingress.local"},
		{"an unknown log level is rejected", "SHARE_LOG_LEVEL", "verbose"},
		{"a shutdown timeout without a unit is rejected", "SHARE_SHUTDOWN_TIMEOUT", "20"},
		{"a zero shutdown timeout is rejected", "SHARE_SHUTDOWN_TIMEOUT", "0s"},
		{"a negative shutdown timeout is rejected", "SHARE_SHUTDOWN_TIMEOUT", "-5s"},
		{"a drain delay without a unit is rejected", "SHARE_DRAIN_DELAY", "5"},
		{"a negative drain delay is rejected", "SHARE_DRAIN_DELAY", "-1s"},
		{"a pprof switch that is not a boolean is rejected", "SHARE_PPROF", "yes"},
		{"an image quota that is not a number is rejected", "SHARE_IMAGE_QUOTA_BYTES", "1GB"},
		{"a negative image quota is rejected", "SHARE_IMAGE_QUOTA_BYTES", "-1"},
		{"a reap interval that is not a duration is rejected", "SHARE_REAP_INTERVAL", "hourly"},
		{"a negative reap interval is rejected", "SHARE_REAP_INTERVAL", "-1m"},
		{"a zero unpublished retention is rejected", "SHARE_UNPUBLISHED_RETENTION", "0"},
		{"a negative unpublished retention is rejected", "SHARE_UNPUBLISHED_RETENTION", "-1h"},
		{"an unpublished retention of fractional days is rejected", "SHARE_UNPUBLISHED_RETENTION", "1.5d"},
		{"an unpublished retention that is not a duration is rejected", "SHARE_UNPUBLISHED_RETENTION", "a week"},
		{"a cache size that is not a number of bytes is rejected", "SHARE_CACHE_BYTES", "64MiB"},
		{"a negative cache size is rejected", "SHARE_CACHE_BYTES", "-1"},
		{"an upload cap that is not a number is rejected", "SHARE_MAX_UPLOADS", "many"},
		{"an upload cap of zero is rejected", "SHARE_MAX_UPLOADS", "0"},
		{"an upload wait that is not a duration is rejected", "SHARE_UPLOAD_WAIT", "long"},
		{"a negative upload wait is rejected", "SHARE_UPLOAD_WAIT", "-1s"},
		{"an edge purge URL without a scheme is rejected", "SHARE_EDGE_PURGE_URLS", "http://varnish:6081,varnish:6081"},
		{"an edge purge URL without a host is rejected", "SHARE_EDGE_PURGE_URLS", "http://"},
		{"an edge address that is not an IP or CIDR is rejected", "SHARE_EDGE_ADDRESSES", "varnish"},
		{"an edge lifetime under a second is rejected", "SHARE_EDGE_MAX_AGE", "500ms"},
		{"an edge lifetime over a week is rejected", "SHARE_EDGE_MAX_AGE", "169h"},
		{"an upload wait past the read timeout is rejected", "SHARE_UPLOAD_WAIT", "6m"},
	}
	t.Run("edge purge URLs without the edges' addresses are rejected", func(t *testing.T) {
		_, err := config.Load(env(map[string]string{"SHARE_EDGE_PURGE_URLS": "http://varnish:6081"}))
		if err == nil || !strings.Contains(err.Error(), "SHARE_EDGE_ADDRESSES must name") {
			t.Errorf("error %v, want SHARE_EDGE_ADDRESSES required", err)
		}
		c, err := config.Load(env(map[string]string{"SHARE_EDGE_PURGE_URLS": "http://varnish:6081", "SHARE_EDGE_ADDRESSES": "10.0.9.0/24, 192.0.2.7"}))
		if err != nil || len(c.EdgeAddresses) != 2 || c.EdgeAddresses[1].String() != "192.0.2.7/32" {
			t.Errorf("with addresses: %v, %v", c.EdgeAddresses, err)
		}
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(env(map[string]string{tc.variable: tc.value}))
			if err == nil {
				t.Fatalf("%s=%q was accepted: %+v", tc.variable, tc.value, c)
			}
			if !strings.Contains(err.Error(), tc.variable) {
				t.Fatalf("error %q does not name %s", err, tc.variable)
			}
			// One bad variable is one error: the others keep their valid defaults.
			for _, v := range config.Variables {
				if v.Name != tc.variable && strings.Contains(err.Error(), v.Name) {
					t.Errorf("error %q also names %s, which was not set", err, v.Name)
				}
			}
			if !reflect.DeepEqual(c, config.Config{}) {
				t.Errorf("a failed Load returned a partly filled Config: %+v", c)
			}
		})
	}
}

func TestLoadReportsEveryErrorAtOnce(t *testing.T) {
	bad := map[string]string{
		"SHARE_ADDR":             "nowhere",
		"SHARE_DATABASE_URL":     "mysql://db",
		"SHARE_REDIS_URL":        "memcached://cache",
		"SHARE_TRUSTED_PROXIES":  "10.0.0.0/99",
		"SHARE_LOG_LEVEL":        "loud",
		"SHARE_SHUTDOWN_TIMEOUT": "soon",
	}
	_, err := config.Load(env(bad))
	if err == nil {
		t.Fatal("Load accepted six bad variables")
	}
	for name := range bad {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not mention %s:\n%v", name, err)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != len(bad) {
		t.Errorf("error has %d lines, want one per bad variable (%d):\n%v", n, len(bad), err)
	}
}

func TestRedact(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"a userinfo password is masked", "postgres://app:s3cret@db:5432/sharenote?sslmode=disable", "postgres://app:xxxxx@db:5432/sharenote?sslmode=disable"},
		{"a redis password without a user is masked", "redis://:s3cret@r:6379/0", "redis://:xxxxx@r:6379/0"},
		{"a password query parameter is masked", "postgres://app@db/sharenote?password=s3cret", "postgres://app@db/sharenote?password=xxxxx"},
		{"a URL without a password is unchanged", "postgres://app@db/sharenote", "postgres://app@db/sharenote"},
		{"a sqlite path is unchanged", "sqlite:/var/lib/sharenote/sharenote.db", "sqlite:/var/lib/sharenote/sharenote.db"},
		{"a sqlite path that is not a valid URL is unchanged", "sqlite:./my notes%.db", "sqlite:./my notes%.db"},
		{"an empty URL stays empty", "", ""},
		{"an unparseable URL is hidden entirely", "postgres://app:ab/cd@db/sharenote", "xxxxx"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := config.Redact(tc.in); got != tc.want {
				t.Fatalf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestLogValueNeverShowsAPassword(t *testing.T) {
	// Every password contains "s3cret"; some are written the way operators get them wrong
	// (unescaped characters), which Load accepts and url.Parse does not.
	cases := []struct {
		name, database, redis string
	}{
		{"userinfo passwords", "postgres://app:Pg-s3cret@db:5432/sharenote", "redis://:Rd-s3cret@r:6379/0"},
		{"a user and password on TLS redis", "postgresql://app:Pg-s3cret@db/sharenote", "rediss://default:Rd-s3cret@r:6380/0"},
		{"password query parameter", "postgres://app@db/sharenote?sslmode=require&password=Pg-s3cret", ""},
		{"percent-encoded password", "postgres://app:Pg%2Fs3cret@db/sharenote", "redis://:Rd%23s3cret@r:6379/0"},
		{"unescaped slash in the password", "postgres://app:Pg/s3cret@db/sharenote", "redis://:Rd/s3cret@r:6379/0"},
		{"unescaped hash in the password", "postgres://app:Pg#s3cret@db/sharenote", "redis://:Rd#s3cret@r:6379/0"},
		{"unescaped percent in the password", "postgres://app:Pg%s3cret@db/sharenote", "redis://:Rd%zs3cret@r:6379/0"},
		{"space in the password", "postgres://app:Pg s3cret@db/sharenote", "redis://:Rd s3cret@r:6379/0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := load(t, map[string]string{"SHARE_DATABASE_URL": tc.database, "SHARE_REDIS_URL": tc.redis})
			var buf bytes.Buffer
			slog.New(slog.NewJSONHandler(&buf, nil)).Info("serving", "config", c)
			out := buf.String()
			if strings.Contains(out, "s3cret") {
				t.Fatalf("the logged configuration shows a password:\n%s", out)
			}
			var line struct {
				Config map[string]any `json:"config"`
			}
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("log line is not JSON: %v\n%s", err, out)
			}
			for _, key := range []string{"addr", "admin_addr", "public_url", "database_url", "redis_url", "log_level", "drain_delay", "shutdown_timeout", "pprof"} {
				if _, ok := line.Config[key]; !ok {
					t.Errorf("the logged configuration lacks %s:\n%s", key, out)
				}
			}
		})
	}
}

// TestConfigurationTableIsTheDeclarations keeps the configuration table of
// docs/configuration.md and Variables from drifting: every SHARE_ row is a declared setting,
// in order, with its meaning and default as declared, and a literal default is the one the
// table states.
func TestConfigurationTableIsTheDeclarations(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(doc), "\n## Settings\n")
	if !found {
		t.Fatal(`docs/configuration.md has no "## Settings" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `SHARE_") {
			rows = append(rows, line)
		}
	}
	for i, s := range config.Variables {
		want := "| `" + s.Name + "` | " + strings.ReplaceAll(s.Meaning, "|", `\|`) + " | " + s.DocDefault() + " |"
		if i >= len(rows) || rows[i] != want {
			t.Errorf("docs/configuration.md settings row %d differs from the declaration; want\n%s", i+1, want)
		}
		if s.DefaultDoc != "" && s.Default != "" && !strings.HasPrefix(s.DefaultDoc, "`"+s.Default+"`") {
			t.Errorf("%s: the documented default %q does not state the default %q", s.Name, s.DefaultDoc, s.Default)
		}
	}
	if len(rows) != len(config.Variables) {
		t.Errorf("docs/configuration.md's settings table has %d SHARE_ rows, Variables %d settings", len(rows), len(config.Variables))
	}
}

func TestInspectNamesSourcesAndMasksSecrets(t *testing.T) {
	values := config.Inspect(env(map[string]string{
		"SHARE_ADDR":           ":8081",
		"SHARE_DATABASE_URL":   "postgres://app:Pg-s3cret@db/sharenote",
		"SHARE_REDIS_URL":      "mysql://:Rd-s3cret@r:6379", // Bad, and still never shown.
		"SHARE_DATABASE_ROLES": "notes=sn_notes, auth=sn_auth",
	}))
	if len(values) != len(config.Variables) {
		t.Fatalf("Inspect returned %d values, want one per setting (%d)", len(values), len(config.Variables))
	}
	want := map[string]struct {
		shown   string
		fromEnv bool
		bad     bool
	}{
		"SHARE_ADDR":          {":8081", true, false},
		"SHARE_PUBLIC_URL":    {"http://localhost:8081", false, false},
		"SHARE_DATABASE_URL":  {"postgres://app:xxxxx@db/sharenote", true, false},
		"SHARE_REDIS_URL":     {"xxxxx", true, true},
		"SHARE_TARGETS":       {strings.Join(routes.Targets, ","), false, false},
		"SHARE_REAP_INTERVAL": {"0s", false, false},
		// As the variable writes them, by target: what config print shows can be set again.
		"SHARE_DATABASE_ROLES": {"auth=sn_auth,notes=sn_notes", true, false},
	}
	for _, v := range values {
		if strings.Contains(v.Shown, "s3cret") || (v.Err != nil && strings.Contains(v.Err.Error(), "s3cret")) {
			t.Errorf("%s shows a password: %q, %v", v.Setting.Name, v.Shown, v.Err)
		}
		w, ok := want[v.Setting.Name]
		if ok && (v.Shown != w.shown || v.FromEnv != w.fromEnv || (v.Err != nil) != w.bad) {
			t.Errorf("%s: shown %q, from the environment %v, error %v; want %q, %v, bad %v", v.Setting.Name, v.Shown, v.FromEnv, v.Err, w.shown, w.fromEnv, w.bad)
		}
	}
}
