package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sharenote/sharenote/libs/routes"
)

// A Setting is one environment variable of Config, declared once: Load, the start-up log
// line (LogValue), `sharenote config print|verify` and the settings table of
// docs/configuration.md (a test compares them) all read it from Variables.
type Setting struct {
	// Name is the environment variable.
	Name string
	// Key names the setting in the start-up log line.
	Key string
	// Meaning is the variable's description in docs/configuration.md, in Markdown.
	Meaning string
	// Default is the value Load uses when the variable is unset or blank, unless
	// defaultFrom computes it from the settings before.
	Default string
	// DefaultDoc is how docs/configuration.md states the default, when it says more than
	// Default in backticks (or "empty").
	DefaultDoc string
	// Secret marks a URL setting, which may hold a credential (a password, an
	// sslpassword, a token): it is shown only through Redact, and its errors quote it
	// only as Redact shows it.
	Secret bool

	// defaultFrom, when set, computes the default from the settings declared before.
	defaultFrom func(c Config) string
	// parse checks value and stores it in c; its error names the variable, one line per
	// bad value.
	parse func(c *Config, name, value string) error
	// show returns the setting's value in c, unmasked: callers mask secrets.
	show func(c Config) slog.Value
}

// DocDefault is the default as the table of docs/configuration.md states it, in Markdown.
func (s Setting) DocDefault() string {
	switch {
	case s.DefaultDoc != "":
		return s.DefaultDoc
	case s.Default == "":
		return "empty"
	}
	return "`" + s.Default + "`"
}

// Variables are the settings Load reads, in the order docs/configuration.md documents
// them. A default computed from other settings only reads settings above it.
var Variables = []Setting{
	{Name: "SHARE_TARGETS", Key: "targets", Default: routes.All,
		Meaning: "what `sharenote serve` serves (flag `--target`): a comma list of `auth`, `publish`, `notes`, `images`, `og-renderer`, or `all`; the routes of the others answer 404",
		parse: func(c *Config, name, v string) (err error) {
			if c.Targets, err = routes.ParseTargets(v); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		},
		show: func(c Config) slog.Value { return slog.AnyValue(c.Targets) }},
	{Name: "SHARE_ADDR", Key: "addr", Default: "127.0.0.1:8080", DefaultDoc: "`127.0.0.1:8080` (`:8080` in container images)",
		Meaning: "public listener",
		parse:   hostPort(func(c *Config) *string { return &c.Addr }), show: text(func(c *Config) *string { return &c.Addr })},
	{Name: "SHARE_ADMIN_ADDR", Key: "admin_addr", Default: "127.0.0.1:9090",
		Meaning: "`/healthz`, `/readyz`, `/metrics` (and `/debug/pprof/` with `SHARE_PPROF`); never routed by the ingress",
		parse:   hostPort(func(c *Config) *string { return &c.AdminAddr }), show: text(func(c *Config) *string { return &c.AdminAddr })},
	{Name: "SHARE_PUBLIC_URL", Key: "public_url", DefaultDoc: "`http://` + `SHARE_ADDR`",
		Meaning:     "`{base_url}` in URLs the API returns",
		defaultFrom: func(c Config) string { return defaultPublicURL(c.Addr) },
		parse: func(c *Config, name, v string) error {
			c.PublicURL = strings.TrimRight(v, "/")
			if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%s=%q is not an absolute http(s) URL", name, c.PublicURL)
			}
			return nil
		},
		show: text(func(c *Config) *string { return &c.PublicURL })},
	{Name: "SHARE_DATA_DIR", Key: "data_dir", Default: "./.data",
		Meaning: "where the embedded default keeps its files",
		parse:   anyText(func(c *Config) *string { return &c.DataDir }), show: text(func(c *Config) *string { return &c.DataDir })},
	{Name: "SHARE_DATABASE_URL", Key: "database_url", DefaultDoc: "`sqlite:$SHARE_DATA_DIR/sharenote.db`", Secret: true,
		Meaning:     "`postgres://…` or `sqlite:<path>`",
		defaultFrom: func(c Config) string { return "sqlite:" + filepath.Join(c.DataDir, "sharenote.db") },
		parse: func(c *Config, name, v string) error {
			c.DatabaseURL = v
			if !hasPrefix(v, "postgres://", "postgresql://", "sqlite:") {
				return fmt.Errorf("%s must be postgres://… or sqlite:<path>", name)
			}
			return nil
		},
		show: text(func(c *Config) *string { return &c.DatabaseURL })},
	{Name: "SHARE_DATABASE_ROLES", Key: "database_roles",
		Meaning: "the database roles `sharenote migrate` grants to, a comma list of `<target>=<role>` (Postgres only): SELECT for a target that only reads (`og-renderer`, `images`), SELECT, INSERT, UPDATE and DELETE for the others, on every table now and on those later migrations add; the operator creates the roles and sets each workload's `SHARE_DATABASE_URL` to its own (docs/operations.md \"Database roles\")",
		parse:   parseDatabaseRoles,
		show:    func(c Config) slog.Value { return slog.StringValue(databaseRoles(c.DatabaseRoles)) }},
	{Name: "SHARE_BLOB_URL", Key: "blob_url", DefaultDoc: "`file://$SHARE_DATA_DIR/blobs`", Secret: true,
		Meaning: "where image bytes live: `file://<dir>` (written atomically: temp file, fsync, rename) or `s3://<bucket>?endpoint=<host:port>&region=<r>&tls=<true|false>` for any S3-compatible store (AWS S3, MinIO, Ceph RGW, R2, GCS interoperability; path-style addressing with an endpoint, AWS's virtual-host style without). " +
			"S3 credentials come from `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (/ `AWS_SESSION_TOKEN`), else the AWS credential chain (shared credentials file, web identity with `AWS_ROLE_ARN` + `AWS_WEB_IDENTITY_TOKEN_FILE` as IRSA sets them, instance metadata)",
		defaultFrom: func(c Config) string { return "file://" + filepath.Join(c.DataDir, "blobs") },
		parse: func(c *Config, name, v string) error {
			c.BlobURL = v
			if !hasPrefix(v, "file://", "s3://") {
				return fmt.Errorf("%s must be file://<dir> or s3://<bucket>?…", name)
			}
			return nil
		},
		show: text(func(c *Config) *string { return &c.BlobURL })},
	{Name: "SHARE_REDIS_URL", Key: "redis_url", Secret: true,
		Meaning: "`redis://…`; empty means in-process limits (one process only)",
		parse: func(c *Config, name, v string) error {
			c.RedisURL = v
			if v != "" && !hasPrefix(v, "redis://", "rediss://") {
				return fmt.Errorf("%s must start with redis:// or rediss://", name)
			}
			return nil
		},
		show: text(func(c *Config) *string { return &c.RedisURL })},
	{Name: "SHARE_REDIS_KEY_PREFIX", Key: "redis_key_prefix", Default: "sharenote:",
		Meaning: "prefix of every Redis key, so installations can share a Redis",
		parse:   anyText(func(c *Config) *string { return &c.RedisKeyPrefix }), show: text(func(c *Config) *string { return &c.RedisKeyPrefix })},
	{Name: "SHARE_TRUSTED_PROXIES", Key: "trusted_proxies",
		Meaning: "comma-separated CIDRs (or IPs) whose `X-Forwarded-For` is believed",
		parse:   parseTrustedProxies,
		show:    func(c Config) slog.Value { return slog.AnyValue(c.TrustedProxyStrings()) }},
	{Name: "SHARE_LOG_LEVEL", Key: "log_level", Default: "info",
		Meaning: "`debug`, `info`, `warn`, `error`",
		parse: func(c *Config, name, v string) error {
			if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
				return fmt.Errorf("%s=%q is not debug, info, warn or error", name, v)
			}
			return nil
		},
		show: func(c Config) slog.Value { return slog.StringValue(c.LogLevel.String()) }},
	{Name: "SHARE_DRAIN_DELAY", Key: "drain_delay", Default: "5s",
		Meaning: "how long both listeners still accept and serve after SIGTERM, with `/readyz` already 503, so that load balancers stop sending first; `0` where something else waits first (the chart's preStop sleep, so the chart sets `0s`)",
		parse:   duration(func(c *Config) *time.Duration { return &c.DrainDelay }, 0, math.MaxInt64, "a duration ≥ 0"),
		show:    durationText(func(c *Config) *time.Duration { return &c.DrainDelay })},
	{Name: "SHARE_SHUTDOWN_TIMEOUT", Key: "shutdown_timeout", Default: "20s",
		Meaning: "how long in-flight requests may take to finish once the listeners close (after the drain delay)",
		parse:   duration(func(c *Config) *time.Duration { return &c.ShutdownTimeout }, 1, math.MaxInt64, "a positive duration"),
		show:    durationText(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
	{Name: "SHARE_PPROF", Key: "pprof", Default: "false",
		Meaning: "`true` serves `/debug/pprof/` on the admin listener; profiles expose internals, so it is off unless asked for",
		parse:   boolean(func(c *Config) *bool { return &c.Pprof }),
		show:    func(c Config) slog.Value { return slog.BoolValue(c.Pprof) }},
	{Name: "SHARE_IMAGE_QUOTA_BYTES", Key: "image_quota_bytes", Default: "1000000000",
		Meaning: "image storage per account (1 GB, the API's limit); lower only for tests or small installs",
		parse:   number(func(c *Config) *int64 { return &c.ImageQuotaBytes }, 0, math.MaxInt64, "a number of bytes"),
		show:    func(c Config) slog.Value { return slog.Int64Value(c.ImageQuotaBytes) }},
	{Name: "SHARE_REAP_INTERVAL", Key: "reap_interval", DefaultDoc: "`10m` on SQLite, `0` on Postgres",
		Meaning:     "how often a serving process whose targets declare the reap (`notes`, so the all-in-one) runs it itself; `0` leaves it to the reaper CronJob (`sharenote reap`)",
		defaultFrom: defaultReapInterval,
		parse:       duration(func(c *Config) *time.Duration { return &c.ReapInterval }, 0, math.MaxInt64, "a duration ≥ 0"),
		show:        durationText(func(c *Config) *time.Duration { return &c.ReapInterval })},
	{Name: "SHARE_UNPUBLISHED_RETENTION", Key: "unpublished_retention", Default: "7d",
		Meaning: "how long the text and versions of an unpublished note are kept; the next reap after that deletes them (a Go duration such as `36h`, or whole days such as `30d`; must be positive)",
		parse: func(c *Config, name, v string) (err error) {
			if c.UnpublishedRetention, err = parseRetention(v); err != nil || c.UnpublishedRetention <= 0 {
				return fmt.Errorf("%s=%q is not a positive duration such as 36h or 30d", name, v)
			}
			return nil
		},
		show: durationText(func(c *Config) *time.Duration { return &c.UnpublishedRetention })},
	{Name: "SHARE_CACHE_BYTES", Key: "cache_bytes", Default: "67108864", DefaultDoc: "`67108864` (64 MiB)",
		Meaning: "size of each process's cache of public reads (note JSON, pages, previews, images), in bytes; `0` turns it off",
		parse:   number(func(c *Config) *int64 { return &c.CacheBytes }, 0, math.MaxInt64, "a number of bytes"),
		show:    func(c Config) slog.Value { return slog.Int64Value(c.CacheBytes) }},
	{Name: "SHARE_MAX_UPLOADS", Key: "max_uploads", Default: "8",
		Meaning: "how many requests with a body over 64 KiB (or of unknown length) one process handles at once, 1–10000; more wait for a slot, in arrival order and before their bodies are read, for up to `SHARE_UPLOAD_WAIT`, then get `503` and `Retry-After`. " +
			"Each streams its images into the object store as they arrive, holding at most about 6 MiB (a 1 MiB chunk being reserved against the quota, and one 5 MiB part of an S3 multipart upload)",
		parse: number(func(c *Config) *int { return &c.MaxUploads }, 1, 10_000, "a whole number from 1 to 10000"),
		show:  func(c Config) slog.Value { return slog.IntValue(c.MaxUploads) }},
	{Name: "SHARE_UPLOAD_WAIT", Key: "upload_wait", Default: "30s",
		Meaning: "how long a request with a body over 64 KiB waits for one of the `SHARE_MAX_UPLOADS` slots before it is answered `503 service_unavailable` with `Retry-After` (`0s` refuses at once); at most `5m`. " +
			"The default queues a burst (50 uploads of 24 MB on 8 slots) instead of refusing most of it, and leaves half of the ingress's 60 s proxy timeout for the upload itself. " +
			"Waiting requests are refused at once when shutdown begins, so that their clients retry on another replica",
		parse: duration(func(c *Config) *time.Duration { return &c.UploadWait }, 0, 5*time.Minute, "a duration from 0 to 5m"),
		show:  durationText(func(c *Config) *time.Duration { return &c.UploadWait })},
	{Name: "SHARE_EDGE_PURGE_URLS", Key: "edge_purge_urls", Secret: true,
		Meaning: "comma-separated `http://` URLs of the operator's edges (Varnish with `deploy/varnish/sharenote.vcl`); set, public reads that come through an edge (`SHARE_EDGE_ADDRESSES`) carry `Surrogate-Key` (keyed hashes of the notes they show) and `Surrogate-Control`, the row that every change of a public read writes to the outbox of changes in its transaction (`libs/outbox`) is due for the edge too, and the `publish` and `notes` targets send its `PURGE` requests to each edge, which the Helm chart's NetworkPolicies let only their pods reach (`networkPolicy.edge`; docs/deployment.md \"The edge\"); empty: no edge, none of that",
		parse:   parseEdgeURLs,
		show:    func(c Config) slog.Value { return slog.AnyValue(c.EdgePurgeURLs) }},
	{Name: "SHARE_EDGE_ADDRESSES", Key: "edge_addresses",
		Meaning: "comma-separated CIDRs (or IPs) the edges' requests come from, required with `SHARE_EDGE_PURGE_URLS`: only a public read that came through one carries `Surrogate-Key` and `Surrogate-Control`, the request's peer being one or, behind trusted proxies (`SHARE_TRUSTED_PROXIES`), an address of `X-Forwarded-For` that they put there; a reader who calls the ingress directly gets neither",
		parse:   parseEdgeAddresses,
		show:    func(c Config) slog.Value { return slog.AnyValue(prefixStrings(c.EdgeAddresses)) }},
	{Name: "SHARE_EDGE_MAX_AGE", Key: "edge_max_age", Default: "1h",
		Meaning: "how long an edge keeps a public read (`Surrogate-Control: max-age`), 1s–7d; never past the note's `expires_at` or that of a note it links to or embeds. Browsers still get `Cache-Control` of at most 60 s",
		parse:   duration(func(c *Config) *time.Duration { return &c.EdgeMaxAge }, time.Second, 7*24*time.Hour, "a duration from 1s to 7d"),
		show:    durationText(func(c *Config) *time.Duration { return &c.EdgeMaxAge })},
	{Name: "SHARE_SITE_RESERVED_HANDLES", Key: "site_reserved_handles", Default: "api,s,assets,admin,www,help",
		Meaning: "comma-separated site handles no account may take (`PUT /api/user/site`), because they would read as the service's own paths or pages; case-insensitive",
		parse:   parseReservedHandles,
		show:    func(c Config) slog.Value { return slog.AnyValue(c.SiteReservedHandles) }},
}

// The functions below build the parse and show functions of the common kinds of setting;
// field returns the setting's field in a Config.

// anyText takes any value.
func anyText(field func(*Config) *string) func(*Config, string, string) error {
	return func(c *Config, _, v string) error { *field(c) = v; return nil }
}

// hostPort takes a listener address.
func hostPort(field func(*Config) *string) func(*Config, string, string) error {
	return func(c *Config, name, v string) error {
		*field(c) = v
		if _, _, err := net.SplitHostPort(v); err != nil {
			return fmt.Errorf("%s=%q is not host:port", name, v)
		}
		return nil
	}
}

// duration takes a Go duration from lowest to highest; want says what in errors.
func duration(field func(*Config) *time.Duration, lowest, highest time.Duration, want string) func(*Config, string, string) error {
	return func(c *Config, name, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < lowest || d > highest {
			return fmt.Errorf("%s=%q is not %s", name, v, want)
		}
		*field(c) = d
		return nil
	}
}

// number takes a whole number from lowest to highest; want says what in errors.
func number[T int | int64](field func(*Config) *T, lowest, highest T, want string) func(*Config, string, string) error {
	return func(c *Config, name, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < int64(lowest) || n > int64(highest) {
			return fmt.Errorf("%s=%q is not %s", name, v, want)
		}
		*field(c) = T(n)
		return nil
	}
}

// boolean takes true or false (and the other spellings strconv.ParseBool reads).
func boolean(field func(*Config) *bool) func(*Config, string, string) error {
	return func(c *Config, name, v string) (err error) {
		if *field(c), err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("%s=%q is not true or false", name, v)
		}
		return nil
	}
}

// text shows a string field.
func text(field func(*Config) *string) func(Config) slog.Value {
	return func(c Config) slog.Value { return slog.StringValue(*field(&c)) }
}

// durationText shows a duration field as Go writes it ("1m30s").
func durationText(field func(*Config) *time.Duration) func(Config) slog.Value {
	return func(c Config) slog.Value { return slog.StringValue(field(&c).String()) }
}

// parseTrustedProxies reads a comma list of CIDRs or IPs, with one error per bad entry.
func parseTrustedProxies(c *Config, name, v string) error {
	var err error
	c.TrustedProxies, err = parsePrefixes(name, v)
	return err
}

// parseEdgeAddresses reads a comma list of CIDRs or IPs, with one error per bad entry,
// and requires one when SHARE_EDGE_PURGE_URLS (read before) names edges: without it no
// read would carry the keys by which the edges are purged.
func parseEdgeAddresses(c *Config, name, v string) error {
	var err error
	if c.EdgeAddresses, err = parsePrefixes(name, v); err != nil {
		return err
	}
	if len(c.EdgeAddresses) == 0 && len(c.EdgePurgeURLs) > 0 {
		return fmt.Errorf("%s must name the edges' addresses when SHARE_EDGE_PURGE_URLS is set", name)
	}
	return nil
}

// parsePrefixes reads the comma list of CIDRs or IPs of setting name, with one error per
// bad entry.
func parsePrefixes(name, v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	var errList []error
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := parsePrefix(s)
		if err != nil {
			errList = append(errList, fmt.Errorf("%s: %q is not a CIDR or IP", name, s))
			continue
		}
		out = append(out, p)
	}
	return out, errors.Join(errList...)
}

// parseEdgeURLs reads a comma list of http(s) URLs, with one error per bad entry.
func parseEdgeURLs(c *Config, name, v string) error {
	var errList []error
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if u, err := url.Parse(s); err != nil || !hasPrefix(s, "http://", "https://") || u.Host == "" {
			errList = append(errList, fmt.Errorf("%s: %q is not an http:// or https:// URL", name, Redact(s)))
			continue
		}
		c.EdgePurgeURLs = append(c.EdgePurgeURLs, s)
	}
	if len(errList) > 0 {
		c.EdgePurgeURLs = nil // One bad variable is one error: no edge to need addresses for.
	}
	return errors.Join(errList...)
}

// parseReservedHandles reads a comma list of words, lowercased.
func parseReservedHandles(c *Config, _, v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" && !slices.Contains(c.SiteReservedHandles, s) {
			c.SiteReservedHandles = append(c.SiteReservedHandles, s)
		}
	}
	return nil
}

// roleName is a Postgres role that needs no quoting: what SHARE_DATABASE_ROLES accepts.
var roleName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// parseDatabaseRoles reads a comma list of target=role, with one error per bad entry.
func parseDatabaseRoles(c *Config, name, v string) error {
	var errList []error
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		target, role, _ := strings.Cut(s, "=")
		switch {
		case !slices.Contains(routes.Targets, target):
			errList = append(errList, fmt.Errorf("%s: %q names no target (%s)", name, s, strings.Join(routes.Targets, ", ")))
		case !roleName.MatchString(role):
			errList = append(errList, fmt.Errorf("%s: %q: a role is lower-case letters, digits and _, not starting with a digit", name, s))
		default:
			if c.DatabaseRoles == nil {
				c.DatabaseRoles = map[string]string{}
			}
			c.DatabaseRoles[target] = role
		}
	}
	return errors.Join(errList...)
}

// databaseRoles is roles as SHARE_DATABASE_ROLES writes them: `<target>=<role>`, by
// target, comma-separated.
func databaseRoles(roles map[string]string) string {
	pairs := make([]string, 0, len(roles))
	for _, target := range slices.Sorted(maps.Keys(roles)) {
		pairs = append(pairs, target+"="+roles[target])
	}
	return strings.Join(pairs, ",")
}

// defaultReapInterval reaps in-process on the embedded default, which has no CronJob.
func defaultReapInterval(c Config) string {
	if strings.HasPrefix(c.DatabaseURL, "sqlite:") {
		return "10m"
	}
	return "0"
}

func hasPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
