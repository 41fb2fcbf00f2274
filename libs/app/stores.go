package app

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace/noop"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/redisx"
)

// WithDB opens the configured database (migrating the embedded default, checking
// Postgres) for an operator command and closes it afterwards.
func WithDB(ctx context.Context, env cli.Env, fn func(*gorm.DB) error) error {
	return WithStores(ctx, env, func(gdb *gorm.DB, _ *changefeed.Feed) error { return fn(gdb) })
}

// WithStores is WithDB with the change feed, for a command whose changes the serving
// processes must hear of (a license deactivation revokes cached sessions). With Redis
// configured the events reach them before the command returns; without it they re-check
// within a second on their own.
func WithStores(ctx context.Context, env cli.Env, fn func(*gorm.DB, *changefeed.Feed) error) error {
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
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
	feed := changefeed.New(rdb, cfg.RedisKeyPrefix, logging.New(env.Stderr, cfg.LogLevel, "sharenote"), prometheus.NewRegistry())
	if err := fn(gdb, feed); err != nil {
		return err
	}
	if rdb == nil {
		return nil
	}
	if err := feed.Flush(ctx); err != nil {
		return fmt.Errorf("the change was made, but not announced to the serving processes (they see it within a second): %w", err)
	}
	return nil
}
