package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// unavailableError marks a failure to reach the database, as opposed to a failed query.
type unavailableError struct{ err error }

func (e unavailableError) Error() string     { return "database unavailable: " + e.err.Error() }
func (e unavailableError) Unwrap() error     { return e.err }
func (e unavailableError) Unavailable() bool { return true }

// Classify marks err as "database unavailable" when it is a connection failure, so that
// the HTTP edge answers 503 service_unavailable (with Retry-After) rather than 500. Other
// errors are returned unchanged.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var (
		opErr   *net.OpError
		connErr *pgconn.ConnectError
	)
	if errors.As(err, &opErr) || errors.As(err, &connErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, sql.ErrConnDone) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return unavailableError{err}
	}
	return err
}
