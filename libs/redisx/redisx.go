// Package redisx connects to the Redis that holds the distributed rate-limit counters.
package redisx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Open returns a client for url. It does not dial: go-redis connects lazily, so a process
// whose Redis is briefly down still starts, reports not-ready and fails open on limits.
func Open(url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		// The parser's message quotes the URL, password included: say only what is wrong.
		return nil, errors.New("redis url: cannot be parsed (check its form: redis://[user:password@]host:port/db)")
	}
	// Short timeouts, one retry and one dial attempt: a limit check must never hold a
	// request for long, and a Redis that is down must fail fast rather than be redialled.
	opts.MaxRetries = 1
	opts.DialerRetries = 1
	opts.DialTimeout = time.Second
	opts.ReadTimeout = 500 * time.Millisecond
	opts.WriteTimeout = 500 * time.Millisecond
	return redis.NewClient(opts), nil
}

// Ping checks that Redis answers within two seconds.
func Ping(ctx context.Context, rdb redis.UniversalClient) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis ping: %w", err)
	}
	return nil
}
