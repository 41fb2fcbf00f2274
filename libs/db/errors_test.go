package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/glebarez/go-sqlite"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/errs"
)

// sqliteBusy returns the error SQLite gives a writer while another connection holds the
// write lock and the writer does not wait.
func sqliteBusy(t *testing.T) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "busy.db")
	open := func() *sql.DB {
		d, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_pragma=journal_mode(WAL)")
		if err != nil {
			t.Fatal(err)
		}
		d.SetMaxOpenConns(1)
		t.Cleanup(func() { _ = d.Close() })
		return d
	}
	holder, writer := open(), open()
	if _, err := holder.Exec("CREATE TABLE t (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	tx, err := holder.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.Exec("INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	_, err = writer.Exec("INSERT INTO t VALUES (2)")
	var le *sqlite.Error
	if !errors.As(err, &le) {
		t.Fatalf("second writer: %v, want a SQLite error", err)
	}
	return err
}

func TestClassifyAnswers503ForEveryUnavailableStore(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"a connection closed under the query", fmt.Errorf("query: %w", pgconn.ErrConnClosed), 503},
		{"the server went away mid-answer", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), 503},
		{"Postgres shutting down (admin)", &pgconn.PgError{Code: "57P01"}, 503},
		{"Postgres shutting down (crash)", &pgconn.PgError{Code: "57P02"}, 503},
		{"Postgres starting up", &pgconn.PgError{Code: "57P03"}, 503},
		{"a connection exception", &pgconn.PgError{Code: "08006"}, 503},
		{"too many connections", &pgconn.PgError{Code: "53300"}, 503},
		{"a deadline", context.DeadlineExceeded, 503},
		{"SQLite busy", sqliteBusy(t), 503},
		{"a unique violation is a bug, not an outage", &pgconn.PgError{Code: "23505"}, 500},
		{"anything else", errors.New("boom"), 500},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := errs.As(db.Classify(c.err), nil).Status; got != c.want {
				t.Errorf("status %d, want %d", got, c.want)
			}
		})
	}
	if db.Classify(nil) != nil {
		t.Error("nil is not an error")
	}
}
