// Package config reads the platform configuration every sharenote process shares from the
// environment (CONTRACT.md "Operations"), applies the defaults and validates it once at
// start, so that a bad setting stops the process with one clear line.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sharenote/sharenote/libs/routes"
)

// Config is the platform part of every service's configuration.
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
	// ImageQuotaBytes is each account's image storage (SPEC: 1,000,000,000 bytes). Only
	// tests and deliberately small installations lower it.
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
}

// Variables lists every environment variable Load reads with its default, in the order
// the README documents them.
var Variables = []struct{ Name, Default, Meaning string }{
	{"SHARE_TARGETS", "all", "what serve serves: a comma list of auth, publish, notes, images, og-renderer, or all"},
	{"SHARE_ADDR", "127.0.0.1:8080", "public listener"},
	{"SHARE_ADMIN_ADDR", "127.0.0.1:9090", "/healthz, /readyz, /metrics, pprof"},
	{"SHARE_PUBLIC_URL", "http:// + SHARE_ADDR", "{base_url} in returned URLs"},
	{"SHARE_DATA_DIR", "./.data", "embedded default's files"},
	{"SHARE_DATABASE_URL", "sqlite:$SHARE_DATA_DIR/sharenote.db", "postgres://… or sqlite:<path>"},
	{"SHARE_BLOB_URL", "file://$SHARE_DATA_DIR/blobs", "where image bytes live: file://<dir> or s3://<bucket>?endpoint=<host:port>&region=<r>&tls=<true|false>; credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the AWS credential chain"},
	{"SHARE_REDIS_URL", "", "redis://…; empty = in-process limits"},
	{"SHARE_REDIS_KEY_PREFIX", "sharenote:", "prefix of every Redis key"},
	{"SHARE_TRUSTED_PROXIES", "", "comma-separated CIDRs whose X-Forwarded-For is believed"},
	{"SHARE_LOG_LEVEL", "info", "debug, info, warn, error"},
	{"SHARE_DRAIN_DELAY", "5s", "how long listeners still accept after SIGTERM (readiness already off); 0 = none"},
	{"SHARE_SHUTDOWN_TIMEOUT", "20s", "time in-flight requests get to finish once the listeners close"},
	{"SHARE_PPROF", "false", "true serves /debug/pprof/ on the admin listener"},
	{"SHARE_IMAGE_QUOTA_BYTES", "1000000000", "image storage per account"},
	{"SHARE_REAP_INTERVAL", "10m on SQLite, 0 on Postgres", "in-process reaper period; 0 = off"},
	{"SHARE_UNPUBLISHED_RETENTION", "7d", "how long an unpublished note's text and versions are kept before the reaper deletes them (Go duration or whole days, e.g. 36h, 30d)"},
	{"SHARE_CACHE_BYTES", "67108864", "per-process cache of public reads, in bytes; 0 = off"},
	{"SHARE_MAX_UPLOADS", "8", "requests with a body over 64 KiB one process handles at once; more wait for a slot (SHARE_UPLOAD_WAIT)"},
	{"SHARE_UPLOAD_WAIT", "30s", "how long a request with a body over 64 KiB waits for one of the SHARE_MAX_UPLOADS slots before it gets 503 with Retry-After; 0 = refuse at once"},
}

// Load reads the configuration through getenv (os.Getenv in production, a map in tests).
func Load(getenv func(string) string) (Config, error) {
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		Addr:           get("SHARE_ADDR", "127.0.0.1:8080"),
		AdminAddr:      get("SHARE_ADMIN_ADDR", "127.0.0.1:9090"),
		DataDir:        get("SHARE_DATA_DIR", "./.data"),
		RedisURL:       get("SHARE_REDIS_URL", ""),
		RedisKeyPrefix: get("SHARE_REDIS_KEY_PREFIX", "sharenote:"),
	}
	var errList []error
	targets, err := routes.ParseTargets(get("SHARE_TARGETS", routes.All))
	c.Targets = targets
	if err != nil {
		errList = append(errList, fmt.Errorf("SHARE_TARGETS: %w", err))
	}
	for _, a := range []struct{ name, v string }{{"SHARE_ADDR", c.Addr}, {"SHARE_ADMIN_ADDR", c.AdminAddr}} {
		if _, _, err := net.SplitHostPort(a.v); err != nil {
			errList = append(errList, fmt.Errorf("%s=%q is not host:port", a.name, a.v))
		}
	}
	c.PublicURL = strings.TrimRight(get("SHARE_PUBLIC_URL", defaultPublicURL(c.Addr)), "/")
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errList = append(errList, fmt.Errorf("SHARE_PUBLIC_URL=%q is not an absolute http(s) URL", c.PublicURL))
	}
	c.DatabaseURL = get("SHARE_DATABASE_URL", "sqlite:"+filepath.Join(c.DataDir, "sharenote.db"))
	if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") &&
		!strings.HasPrefix(c.DatabaseURL, "sqlite:") {
		errList = append(errList, errors.New("SHARE_DATABASE_URL must be postgres://… or sqlite:<path>"))
	}
	c.BlobURL = get("SHARE_BLOB_URL", "file://"+filepath.Join(c.DataDir, "blobs"))
	if !strings.HasPrefix(c.BlobURL, "file://") && !strings.HasPrefix(c.BlobURL, "s3://") {
		errList = append(errList, errors.New("SHARE_BLOB_URL must be file://<dir> or s3://<bucket>?…"))
	}
	if c.RedisURL != "" && !strings.HasPrefix(c.RedisURL, "redis://") && !strings.HasPrefix(c.RedisURL, "rediss://") {
		errList = append(errList, errors.New("SHARE_REDIS_URL must start with redis:// or rediss://"))
	}
	for _, s := range strings.Split(get("SHARE_TRUSTED_PROXIES", ""), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := parsePrefix(s)
		if err != nil {
			errList = append(errList, fmt.Errorf("SHARE_TRUSTED_PROXIES: %q is not a CIDR or IP", s))
			continue
		}
		c.TrustedProxies = append(c.TrustedProxies, p)
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("SHARE_LOG_LEVEL", "info"))); err != nil {
		errList = append(errList, fmt.Errorf("SHARE_LOG_LEVEL=%q is not debug, info, warn or error", getenv("SHARE_LOG_LEVEL")))
	}
	d, err := time.ParseDuration(get("SHARE_SHUTDOWN_TIMEOUT", "20s"))
	if err != nil || d <= 0 {
		errList = append(errList, fmt.Errorf("SHARE_SHUTDOWN_TIMEOUT=%q is not a positive duration", getenv("SHARE_SHUTDOWN_TIMEOUT")))
	}
	c.ShutdownTimeout = d
	if c.DrainDelay, err = time.ParseDuration(get("SHARE_DRAIN_DELAY", "5s")); err != nil || c.DrainDelay < 0 {
		errList = append(errList, fmt.Errorf("SHARE_DRAIN_DELAY=%q is not a duration ≥ 0", getenv("SHARE_DRAIN_DELAY")))
	}
	if c.Pprof, err = strconv.ParseBool(get("SHARE_PPROF", "false")); err != nil {
		errList = append(errList, fmt.Errorf("SHARE_PPROF=%q is not true or false", getenv("SHARE_PPROF")))
	}
	q, err := strconv.ParseInt(get("SHARE_IMAGE_QUOTA_BYTES", "1000000000"), 10, 64)
	if err != nil || q < 0 {
		errList = append(errList, fmt.Errorf("SHARE_IMAGE_QUOTA_BYTES=%q is not a number of bytes", getenv("SHARE_IMAGE_QUOTA_BYTES")))
	}
	c.ImageQuotaBytes = q
	if c.CacheBytes, err = strconv.ParseInt(get("SHARE_CACHE_BYTES", "67108864"), 10, 64); err != nil || c.CacheBytes < 0 {
		errList = append(errList, fmt.Errorf("SHARE_CACHE_BYTES=%q is not a number of bytes", getenv("SHARE_CACHE_BYTES")))
	}
	if c.MaxUploads, err = strconv.Atoi(get("SHARE_MAX_UPLOADS", "8")); err != nil || c.MaxUploads < 1 || c.MaxUploads > 10_000 {
		errList = append(errList, fmt.Errorf("SHARE_MAX_UPLOADS=%q is not a whole number from 1 to 10000", getenv("SHARE_MAX_UPLOADS")))
	}
	if c.UploadWait, err = time.ParseDuration(get("SHARE_UPLOAD_WAIT", "30s")); err != nil || c.UploadWait < 0 || c.UploadWait > 5*time.Minute {
		errList = append(errList, fmt.Errorf("SHARE_UPLOAD_WAIT=%q is not a duration from 0 to 5m", getenv("SHARE_UPLOAD_WAIT")))
	}
	reapDefault := "0"
	if strings.HasPrefix(c.DatabaseURL, "sqlite:") {
		reapDefault = "10m"
	}
	if c.ReapInterval, err = time.ParseDuration(get("SHARE_REAP_INTERVAL", reapDefault)); err != nil || c.ReapInterval < 0 {
		errList = append(errList, fmt.Errorf("SHARE_REAP_INTERVAL=%q is not a duration ≥ 0", getenv("SHARE_REAP_INTERVAL")))
	}
	if c.UnpublishedRetention, err = parseRetention(get("SHARE_UNPUBLISHED_RETENTION", "7d")); err != nil || c.UnpublishedRetention <= 0 {
		errList = append(errList, fmt.Errorf("SHARE_UNPUBLISHED_RETENTION=%q is not a positive duration such as 36h or 30d", getenv("SHARE_UNPUBLISHED_RETENTION")))
	}
	if err := errors.Join(errList...); err != nil {
		return Config{}, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}

// TrustedProxyStrings returns the trusted networks in the form gin's SetTrustedProxies takes.
func (c Config) TrustedProxyStrings() []string {
	out := make([]string, 0, len(c.TrustedProxies))
	for _, p := range c.TrustedProxies {
		out = append(out, p.String())
	}
	return out
}

// LogValue prints the configuration with the passwords of connection URLs masked, so the
// start-up line never leaks a credential.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Any("targets", c.Targets),
		slog.String("addr", c.Addr),
		slog.String("admin_addr", c.AdminAddr),
		slog.String("public_url", c.PublicURL),
		slog.String("data_dir", c.DataDir),
		slog.String("database_url", Redact(c.DatabaseURL)),
		slog.String("blob_url", c.BlobURL),
		slog.String("redis_url", Redact(c.RedisURL)),
		slog.String("redis_key_prefix", c.RedisKeyPrefix),
		slog.Any("trusted_proxies", c.TrustedProxyStrings()),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("drain_delay", c.DrainDelay.String()),
		slog.String("shutdown_timeout", c.ShutdownTimeout.String()),
		slog.Bool("pprof", c.Pprof),
		slog.Int64("image_quota_bytes", c.ImageQuotaBytes),
		slog.String("reap_interval", c.ReapInterval.String()),
		slog.String("unpublished_retention", c.UnpublishedRetention.String()),
		slog.Int64("cache_bytes", c.CacheBytes),
		slog.Int("max_uploads", c.MaxUploads),
		slog.String("upload_wait", c.UploadWait.String()),
	)
}

// Redact returns a connection URL with its password (and any password query parameter)
// replaced by "xxxxx".
func Redact(raw string) string {
	if strings.HasPrefix(raw, "sqlite:") {
		return raw // A file path holds no credential.
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Load accepts a URL whose password has an unescaped '/', '#', '%' or space, which
		// does not parse; its password could be anywhere in it, so none of it is shown.
		return "xxxxx"
	}
	if u.Opaque != "" {
		return raw
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
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
