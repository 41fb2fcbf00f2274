package db

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// Grant gives role, on the schema of gdb's connection, what a serving process needs:
// SELECT on every table, and with write also INSERT, UPDATE and DELETE and the use of the
// sequences (serial ids). It grants the same on the tables and sequences that the role
// running it (the owner, which migrates) creates later, with ALTER DEFAULT PRIVILEGES, so
// that a migration never leaves a role without a new table. It never revokes, and it
// creates no role: the operator does (docs/operations.md "Database roles"). Postgres
// only; role must be a plain lower-case identifier.
func Grant(ctx context.Context, gdb *gorm.DB, role string, write bool) error {
	if Dialect(gdb) != Postgres {
		return fmt.Errorf("grant to %s: database roles need Postgres", role)
	}
	var schema string
	if err := gdb.WithContext(ctx).Raw("SELECT current_schema()").Scan(&schema).Error; err != nil {
		return fmt.Errorf("grant to %s: %w", role, err)
	}
	return gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, stmt := range grants(quoteIdent(schema), quoteIdent(role), write) {
			if err := tx.Exec(stmt).Error; err != nil {
				return fmt.Errorf("grant to %s: %s: %w", role, stmt, err)
			}
		}
		return nil
	})
}

// grants are the statements of Grant, on quoted identifiers.
func grants(schema, role string, write bool) []string {
	tables := "SELECT"
	if write {
		tables = "SELECT, INSERT, UPDATE, DELETE"
	}
	out := []string{
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT " + tables + " ON ALL TABLES IN SCHEMA " + schema + " TO " + role,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA " + schema + " GRANT " + tables + " ON TABLES TO " + role,
	}
	if write {
		out = append(out,
			"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA "+schema+" TO "+role,
			"ALTER DEFAULT PRIVILEGES IN SCHEMA "+schema+" GRANT USAGE, SELECT ON SEQUENCES TO "+role)
	}
	return out
}

// quoteIdent quotes a Postgres identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
