// Package db opens the service's database through gorm: Postgres in production and a
// pure-Go SQLite file for the embedded default. The two dialects differ only here and in a
// few store branches; everything else sees a *gorm.DB.
//
// One rule keeps the dialects equivalent: never compare or order by timestamps in SQL.
// SQLite stores times as text whose fraction has a variable width, so text order is not
// time order. Stores order by integer sequence columns and compare times in Go.
package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/plugin/opentelemetry/tracing"
)

// Dialect names.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// MaxConns is the size of a process's pool of Postgres connections.
const MaxConns = 20

// Open connects to the database named by url (postgres://… or sqlite:<path>), instruments
// it for tracing with tp and checks that it answers.
func Open(ctx context.Context, url string, tp trace.TracerProvider) (*gorm.DB, error) {
	cfg := &gorm.Config{
		Logger:         logger.Discard, // Requests are logged once, by the HTTP middleware.
		TranslateError: true,           // Unique violations arrive as gorm.ErrDuplicatedKey.
		// A write of one statement is atomic by itself, and every write of several runs in
		// an explicit transaction: gorm's implicit one would cost two round trips more.
		SkipDefaultTransaction: true,
		NowFunc:                func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) },
	}
	var (
		gdb *gorm.DB
		err error
	)
	switch {
	case strings.HasPrefix(url, "sqlite:"):
		gdb, err = openSQLite(strings.TrimPrefix(url, "sqlite:"), cfg)
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		gdb, err = gorm.Open(postgres.Open(url), cfg)
		if err == nil {
			// Every open connection may stay idle: with fewer idle than open slots, a
			// burst above the idle count closes connections as it ends and the next
			// opens them again, and each new connection costs Postgres a backend
			// process (a fork and about a millisecond of CPU). Idle ones close after
			// five minutes instead.
			sqlDB, _ := gdb.DB()
			sqlDB.SetMaxOpenConns(MaxConns)
			sqlDB.SetMaxIdleConns(MaxConns)
			sqlDB.SetConnMaxIdleTime(5 * time.Minute)
			sqlDB.SetConnMaxLifetime(30 * time.Minute)
		}
	default:
		return nil, errors.New("database url must be postgres://… or sqlite:<path>")
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// Query variables stay out of spans: they include hashed secrets and note bodies.
	if err := gdb.Use(tracing.NewPlugin(tracing.WithTracerProvider(tp), tracing.WithoutMetrics(), tracing.WithoutQueryVariables())); err != nil {
		return nil, fmt.Errorf("database tracing: %w", err)
	}
	if Dialect(gdb) == Postgres {
		if err := useBatches(gdb, cfg, tp); err != nil {
			Close(gdb)
			return nil, err
		}
	}
	if err := Ping(ctx, gdb); err != nil {
		Close(gdb)
		return nil, err
	}
	return gdb, nil
}

// openSQLite opens the embedded default's file, creating its folder. WAL lets readers run
// beside the writer; one open connection serialises writers inside the process, which is
// what SQLite wants, and the busy timeout covers a second process (the CLI) on the file.
//
// The file holds every note, including unpublished ones, and the hashes of credentials, so
// only its owner may read it: folders are created 0700 and the file 0600. The file is
// created here, before SQLite would create it 0644 (readable by every user of the machine
// under the usual umask); SQLite gives its -wal and -shm files the mode of the database
// file. An existing folder or file keeps the mode it has.
func openSQLite(path string, cfg *gorm.Config) (*gorm.DB, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	// Transactions begin IMMEDIATE: each takes the database's write lock at its start
	// (waiting up to the busy timeout for another process's writer), so that one that
	// reads and then writes never meets a commit of another process in between, which
	// SQLite refuses at once (SQLITE_BUSY_SNAPSHOT: "database is locked (517)"), whatever
	// the busy timeout: the reaper command beside a serving process, whose change feed
	// relay writes in the background.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	gdb, err := gorm.Open(sqlite.Open(dsn), cfg)
	if err != nil {
		return nil, err
	}
	sqlDB, _ := gdb.DB()
	sqlDB.SetMaxOpenConns(1)
	return gdb, nil
}

// Dialect returns Postgres or SQLite.
func Dialect(gdb *gorm.DB) string {
	if gdb.Name() == Postgres {
		return Postgres
	}
	return SQLite
}

// Ping checks that the database answers within two seconds.
func Ping(ctx context.Context, gdb *gorm.DB) error {
	sqlDB, err := gdb.DB()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("database ping: %w", err)
	}
	return nil
}

// Close closes the connection pool.
func Close(gdb *gorm.DB) {
	if sqlDB, err := gdb.DB(); err == nil {
		_ = sqlDB.Close()
	}
}
