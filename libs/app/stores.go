package app

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/accountdb"
	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/outbox"
	"github.com/sharenote/sharenote/libs/redisx"
	"github.com/sharenote/sharenote/libs/site"
)

// WithAccounts opens the configured database for an operator command, hands fn the
// account core on it, and closes the database afterwards. The core announces its changes
// on the change feed, because the serving processes must hear of them (a license
// deactivation revokes their cached sessions): with Redis configured the events reach
// them before WithAccounts returns; without it they re-check within a second on their own.
func WithAccounts(ctx context.Context, env cli.Env, fn func(*account.Core) error) error {
	return withConfiguredStores(ctx, env, func(_ config.Config, s stores) error {
		return fn(account.NewCore(s.accounts, time.Now, s.relay))
	})
}

// WithSites is WithAccounts for the site use cases.
func WithSites(ctx context.Context, env cli.Env, fn func(*site.Core) error) error {
	return withConfiguredStores(ctx, env, func(cfg config.Config, s stores) error {
		return fn(newSites(cfg, s.accounts, s.reads, time.Now, s.relay))
	})
}

// newSites are the site use cases over the stores, configured by cfg.
func newSites(cfg config.Config, accounts *accountdb.Store, reads *notedb.Reads, now func() time.Time, notifier account.Notifier) *site.Core {
	return site.NewCore(accounts, reads, site.Config{Reserved: cfg.SiteReservedHandles, PublicURL: cfg.PublicURL, Now: now, Notifier: notifier})
}

// withConfiguredStores is withStores over the configuration of env, without blobs.
func withConfiguredStores(ctx context.Context, env cli.Env, fn func(config.Config, stores) error) error {
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	return withStores(ctx, cfg, env.Stderr, nil, func(s stores) error { return fn(cfg, s) })
}

// stores are an operator command's stores over the configured database, and the change
// feed on which what it changes is announced: a change of public reads through the
// outbox the stores write, which the serving processes' relays announce; a revocation
// of sessions through relay, on the feed.
type stores struct {
	// notes is nil for a command that touches no image (withStores without blobs).
	notes    *notedb.Store
	accounts *accountdb.Store
	reads    *notedb.Reads
	feed     *changefeed.Feed
	relay    *outbox.Relay
}

// withStores opens the database of cfg (migrating the embedded default, checking
// Postgres) and, when configured, Redis; hands fn the stores on them, the notes' on blobs;
// once fn has succeeded, flushes the change feed; and closes what it opened. logs receives
// the change feed's log lines.
func withStores(ctx context.Context, cfg config.Config, logs io.Writer, blobs blob.Store, fn func(stores) error) error {
	gdb, err := OpenDB(ctx, cfg.DatabaseURL, noop.NewTracerProvider())
	if err != nil {
		return err
	}
	defer db.Close(gdb)
	var rdb *redis.Client
	if cfg.RedisURL != "" {
		if rdb, err = redisx.Open(cfg.RedisURL); err != nil {
			return err
		}
		defer func() { _ = rdb.Close() }()
	}
	log := logging.New(logs, cfg.LogLevel, "sharenote")
	reg := prometheus.NewRegistry()
	s := stores{reads: notedb.NewReads(gdb), feed: changefeed.New(rdb, cfg.RedisKeyPrefix, log, reg)}
	changes := newWriter(cfg, s.feed)
	s.accounts, s.relay = accountdb.New(gdb, changes), outbox.NewRelay(gdb, s.feed, log, reg)
	if blobs != nil {
		s.notes = notedb.New(gdb, changes)
	}
	if err := fn(s); err != nil {
		return err
	}
	if rdb == nil {
		return nil
	}
	if err := s.feed.Flush(ctx); err != nil {
		return fmt.Errorf("the change was made, but not announced to the serving processes (they see it within a second): %w", err)
	}
	return nil
}
