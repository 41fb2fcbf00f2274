// Package config reads the platform configuration every sharenote process shares from the
// environment (docs/configuration.md), applies the defaults and validates it once at
// start, so that a bad setting stops the process with one clear line.
//
// Each setting is declared once, in Variables (settings.go): its variable, default,
// documentation, parsing and whether it is secret. Load, the start-up log line
// (Config.LogValue), `sharenote config print|verify` (Inspect) and the table of
// docs/configuration.md (checked by a test) all read that one list.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Config is the configuration of a sharenote process, one struct whatever targets it serves.
type Config struct {
	// Targets are what `serve` serves (SHARE_TARGETS, a comma list; "all" is every target),
	// in deployment order.
	Targets []string
	// Addr is the public listener (SHARE_ADDR).
	Addr string
	// AdminAddr serves /healthz, /readyz, /metrics and pprof (SHARE_ADMIN_ADDR); the ingress
	// never routes to it.
	AdminAddr string
	// PublicURL is {base_url} in every URL the API returns, without a trailing slash.
	PublicURL string
	// DataDir is where the embedded default keeps its SQLite file.
	DataDir string
	// DatabaseURL is postgres://… or sqlite:<path>.
	DatabaseURL string
	// DatabaseRoles are the database roles `sharenote migrate` grants to, by target
	// (SHARE_DATABASE_ROLES): each gets what its target needs.
	DatabaseRoles map[string]string
	// BlobURL is where image bytes live (libs/blob.Open).
	BlobURL string
	// RedisURL is redis://…; empty selects the in-process rate limiter (one process only).
	RedisURL string
	// RedisKeyPrefix namespaces every Redis key, so that several installations (or test
	// runs) can share one Redis.
	RedisKeyPrefix string
	// TrustedProxies are the networks whose X-Forwarded-For header is believed.
	TrustedProxies []netip.Prefix
	// LogLevel is the minimum level logged.
	LogLevel slog.Level
	// DrainDelay is how long the listeners go on accepting and serving after SIGTERM, with
	// readiness already off, so that load balancers stop sending requests before the
	// listeners close. It is 0 where something else waits first (the chart's preStop sleep).
	DrainDelay time.Duration
	// ShutdownTimeout bounds the wait for in-flight requests once the listeners close.
	ShutdownTimeout time.Duration
	// Pprof serves /debug/pprof/ on the admin listener; it is off unless asked for, because
	// profiles expose the process's internals and cost CPU.
	Pprof bool
	// ReapInterval is how often the process itself deletes the bytes of released images;
	// 0 leaves it to the reaper CronJob. It defaults to 10m on the embedded default (which
	// has no CronJob) and to 0 on Postgres.
	ReapInterval time.Duration
	// UnpublishedRetention is how long the text and version snapshots of an unpublished
	// note are kept; the reaper (CronJob or ReapInterval) deletes them afterwards.
	UnpublishedRetention time.Duration
	// ImageQuotaBytes is each account's image storage (1,000,000,000 bytes, docs/api.md
	// "Limits"). Only tests and deliberately small installations lower it.
	ImageQuotaBytes int64
	// CacheBytes bounds the per-process cache of public reads; 0 turns it off.
	CacheBytes int64
	// MaxUploads caps the requests with a large body (multipart publishes, big JSON) one
	// process handles at once; more wait for a slot, before their bodies are read.
	MaxUploads int
	// UploadWait bounds how long a request with a large body waits for one of the
	// MaxUploads slots before it is refused with 503; 0 refuses at once. The default,
	// 30 s, queues a burst of 50 uploads on 8 slots, and leaves half of the ingress's
	// 60 s proxy timeout for the upload itself.
	UploadWait time.Duration
	// EdgePurgeURLs are the operator's edges (Varnish, a CDN's purge endpoint): set, public
	// reads carry surrogate keys and Surrogate-Control, the changes the outbox of changes
	// holds are due for the edge, and the writing targets send their purges to each
	// (libs/edge). Empty: no edge.
	EdgePurgeURLs []string
	// EdgeAddresses are the addresses the edges' requests come from: only a read that came
	// through one (its peer, or a trusted proxy's X-Forwarded-For entry) carries
	// Surrogate-Key and Surrogate-Control.
	EdgeAddresses []netip.Prefix
	// EdgeMaxAge is the longest an edge keeps a public read (Surrogate-Control), never past
	// the note's expiry or that of a note it links to.
	EdgeMaxAge time.Duration
	// SiteReservedHandles are the site handles no account may take, lowercase.
	SiteReservedHandles []string
}

// A Value is one setting as Load read it, for `sharenote config print` and `verify`.
type Value struct {
	Setting Setting
	// Shown is the value as the start-up log line shows it, a secret masked by Redact; a
	// bad value is shown as it was set, and a bad secret not at all ("xxxxx").
	Shown string
	// FromEnv tells whether the environment set the value; else it is the default.
	FromEnv bool
	// Err says why the value is bad, one line per bad value; nil when it is good.
	Err error
}

// Load reads the configuration through getenv (os.Getenv in production, a map in tests).
// Its error names every bad variable, one line each.
func Load(getenv func(string) string) (Config, error) {
	c, values := read(getenv)
	var errList []error
	for _, v := range values {
		if v.Err != nil {
			errList = append(errList, v.Err)
		}
	}
	if err := errors.Join(errList...); err != nil {
		return Config{}, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}

// Inspect reads the configuration as Load does and returns every setting of Variables,
// in order, with its value, its source and its error.
func Inspect(getenv func(string) string) []Value {
	_, values := read(getenv)
	return values
}

// read parses every setting in the order of Variables, so that a computed default sees
// the settings above it.
func read(getenv func(string) string) (Config, []Value) {
	var c Config
	values := make([]Value, len(Variables))
	raw := make([]string, len(Variables))
	for i, s := range Variables {
		v := strings.TrimSpace(getenv(s.Name))
		values[i] = Value{Setting: s, FromEnv: v != ""}
		if v == "" {
			v = s.Default
			if s.defaultFrom != nil {
				v = s.defaultFrom(c)
			}
		}
		raw[i], values[i].Err = v, s.parse(&c, s.Name, v)
	}
	for i, s := range Variables {
		switch {
		case values[i].Err == nil:
			values[i].Shown = format(s.value(c))
		case s.Secret:
			values[i].Shown = "xxxxx" // Redact shows some malformed URLs whole.
		default:
			values[i].Shown = raw[i]
		}
	}
	return c, values
}

// value is the setting's value in c as logs show it: a secret through Redact, each URL
// of a list on its own.
func (s Setting) value(c Config) slog.Value {
	v := s.show(c)
	if !s.Secret {
		return v
	}
	if list, ok := v.Any().([]string); ok {
		shown := make([]string, len(list))
		for i, u := range list {
			shown[i] = Redact(u)
		}
		return slog.AnyValue(shown)
	}
	return slog.StringValue(Redact(v.String()))
}

// format writes a value the way its variable takes it: lists comma-separated.
func format(v slog.Value) string {
	if list, ok := v.Any().([]string); ok {
		return strings.Join(list, ",")
	}
	return v.String()
}

// TrustedProxyStrings returns the trusted networks as the start-up line shows them.
func (c Config) TrustedProxyStrings() []string { return prefixStrings(c.TrustedProxies) }

// prefixStrings returns networks as the start-up line shows them.
func prefixStrings(prefixes []netip.Prefix) []string {
	out := make([]string, 0, len(prefixes))
	for _, p := range prefixes {
		out = append(out, p.String())
	}
	return out
}

// LogValue prints the configuration with the credentials of its URL settings masked
// (Redact), so that the start-up line never leaks one.
func (c Config) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, len(Variables))
	for _, s := range Variables {
		attrs = append(attrs, slog.Attr{Key: s.Key, Value: s.value(c)})
	}
	return slog.GroupValue(attrs...)
}

// Redact returns a URL setting as logs and `sharenote config print` show it: the
// password of its userinfo and the values of its sensitive query parameters
// (sensitiveParam) replaced by "xxxxx", and a key=value connection string (libpq's
// `host=db password=…`) with its sensitive values replaced alike. A value that does not
// parse is hidden entirely, since its credential could be anywhere in it. It is the one
// redaction of the code base: the start-up line, `config print` and the edge purge job's
// errors all show URLs through it.
func Redact(raw string) string {
	switch {
	case strings.HasPrefix(raw, "sqlite:"):
		return raw // A file path holds no credential.
	case keyValueDSN.MatchString(raw):
		return redactKeyValues(raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Load accepts a URL whose password has an unescaped '/', '#', '%' or space, which
		// does not parse; its password could be anywhere in it, so none of it is shown.
		return redacted
	}
	if u.Opaque != "" && strings.Contains(u.Opaque, "@") {
		return redacted // "scheme:user:password@host": not a URL we can take apart.
	}
	u.RawQuery = redactQuery(u.RawQuery)
	u.Fragment, u.RawFragment = redactFragment(u.Fragment), ""
	return u.Redacted()
}

// redacted is what Redact shows instead of a credential.
const redacted = "xxxxx"

// sensitiveParam reports whether a query parameter or connection-string key carries a
// credential: libpq's password and sslpassword, an object store's secret key or session
// token, an edge's token or signature, an API key. The name is compared in lower case
// without '-' and '_', and generously: masking a harmless value costs nothing.
func sensitiveParam(name string) bool {
	name = strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(name))
	for _, word := range []string{"pass", "pwd", "secret", "token", "signature", "credential", "apikey", "accesskey", "privatekey", "auth"} {
		if strings.Contains(name, word) {
			return true
		}
	}
	return name == "key" || name == "sig"
}

// redactQuery masks the values of the sensitive parameters of a raw query, keeping the
// parameters' order and spelling.
func redactQuery(rawQuery string) string {
	if rawQuery == "" {
		return ""
	}
	parts := strings.Split(rawQuery, "&")
	for i, part := range parts {
		key, _, _ := strings.Cut(part, "=")
		if name, err := url.QueryUnescape(key); err != nil || sensitiveParam(name) {
			parts[i] = key + "=" + redacted
		}
	}
	return strings.Join(parts, "&")
}

// redactFragment hides a fragment that looks like parameters (`#token=…`); a fragment
// never reaches a server, so a URL setting has no use for one anyway.
func redactFragment(fragment string) string {
	if strings.Contains(fragment, "=") {
		return redacted
	}
	return fragment
}

// keyValueDSN matches a connection string of key=value pairs (libpq's), which starts
// with a key and '=' where a URL starts with its scheme and ':'.
var keyValueDSN = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_]*\s*=`)

// redactKeyValues masks the sensitive values of a libpq connection string: pairs
// key=value separated by spaces, '=' possibly surrounded by spaces, a value possibly in
// single quotes with backslash escapes. A string that does not parse is hidden entirely.
func redactKeyValues(dsn string) string {
	var out strings.Builder
	rest := dsn
	for {
		trimmed := strings.TrimLeft(rest, " \t\n\r")
		out.WriteString(rest[:len(rest)-len(trimmed)])
		if rest = trimmed; rest == "" {
			return out.String()
		}
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			return redacted
		}
		key := strings.TrimSpace(rest[:eq])
		if key == "" || strings.ContainsAny(key, " \t\n\r'\\") {
			return redacted
		}
		afterEq := rest[eq+1:]
		value := strings.TrimLeft(afterEq, " \t\n\r")
		end, ok := valueEnd(value)
		if !ok {
			return redacted
		}
		out.WriteString(rest[:eq+1] + afterEq[:len(afterEq)-len(value)])
		if sensitiveParam(key) {
			out.WriteString(redacted)
		} else {
			out.WriteString(value[:end])
		}
		rest = value[end:]
	}
}

// valueEnd returns the length of the value at the start of s: up to the closing quote of
// a quoted value, else up to the next space, a backslash escaping the next byte in both;
// ok is false for an unclosed quote.
func valueEnd(s string) (n int, ok bool) {
	quoted := strings.HasPrefix(s, "'")
	i := 0
	if quoted {
		i = 1
	}
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case quoted && c == '\'':
			return i + 1, true
		case !quoted && strings.IndexByte(" \t\n\r", c) >= 0:
			return i, true
		}
	}
	return len(s), !quoted
}

func defaultPublicURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// parseRetention reads a Go duration or a whole number of days ("30d"): retentions are
// counted in days, which Go durations do not have.
func parseRetention(s string) (time.Duration, error) {
	days, ok := strings.CutSuffix(s, "d")
	if !ok {
		return time.ParseDuration(s)
	}
	n, err := strconv.Atoi(days)
	if err != nil || n < 0 || n > 100_000 {
		return 0, fmt.Errorf("%q is not a whole number of days", s)
	}
	return time.Duration(n) * 24 * time.Hour, nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}
