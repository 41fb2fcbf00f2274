package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/glebarez/go-sqlite"
	"github.com/jackc/pgx/v5/pgconn"
)

// unavailableError marks a failure to reach the database, as opposed to a failed query.
type unavailableError struct{ err error }

func (e unavailableError) Error() string     { return "database unavailable: " + e.err.Error() }
func (e unavailableError) Unwrap() error     { return e.err }
func (e unavailableError) Unavailable() bool { return true }

// SQLite's result codes for a database another connection holds (SQLITE_BUSY,
// SQLITE_LOCKED): the database is there but cannot take the statement now.
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// Classify marks err as "database unavailable" when the database could not be reached or
// cannot serve right now, so that every edge answers 503 service_unavailable (with
// Retry-After) rather than 500: a connection that cannot be opened, was reset, or was
// closed under the query (a Postgres killed or restarted: "conn closed", unexpected EOF),
// Postgres shutting down or starting up (SQLSTATE 57P01, 57P02, 57P03), any SQLSTATE of
// class 08 (connection exception), too many connections (53300), a deadline, and SQLite
// busy or locked. Other errors are returned unchanged.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	if unavailable(err) {
		return unavailableError{err}
	}
	return err
}

func unavailable(err error) bool {
	var (
		opErr   *net.OpError
		connErr *pgconn.ConnectError
		pgErr   *pgconn.PgError
		liteErr *sqlite.Error
	)
	switch {
	case errors.As(err, &opErr), errors.As(err, &connErr),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &pgErr):
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" ||
			pgErr.Code == "57P03" || pgErr.Code == "53300"
	case errors.As(err, &liteErr):
		code := liteErr.Code() & 0xff // Extended codes keep the primary code in the low byte.
		return code == sqliteBusy || code == sqliteLocked
	}
	return false
}
