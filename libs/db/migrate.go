package db

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/gorm"
)

// migrations holds the versioned schema, one folder per dialect. Each version exists in
// both folders with the same number, so both dialects always have the same schema.
//
//go:embed migrations
var migrations embed.FS

// Migrate applies every pending migration. On Postgres a session advisory lock makes
// concurrent runs (two replicas, or the hook Job racing a developer) safe.
func Migrate(ctx context.Context, gdb *gorm.DB) error {
	p, err := provider(gdb)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", Classify(err))
	}
	return nil
}

func provider(gdb *gorm.DB) (*goose.Provider, error) {
	sqlDB, err := gdb.DB()
	if err != nil {
		return nil, err
	}
	dialect := Dialect(gdb)
	fsys, err := fs.Sub(migrations, "migrations/"+dialect)
	if err != nil {
		return nil, err
	}
	var opts []goose.ProviderOption
	gooseDialect := goose.DialectSQLite3
	if dialect == Postgres {
		gooseDialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(gooseDialect, sqlDB, fsys, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}

// CheckCurrent fails when migrations are pending, naming the command that applies them.
func CheckCurrent(ctx context.Context, gdb *gorm.DB) error {
	p, err := provider(gdb)
	if err != nil {
		return err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("check schema: %w", Classify(err))
	}
	if pending {
		return fmt.Errorf("database schema is not current: run `sharenote migrate` first")
	}
	return nil
}
