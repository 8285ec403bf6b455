package store

import (
	"context"
	"errors"
)

// ErrReadOnly is CanWrite on a PostgreSQL server that takes no writes: a
// standby (in recovery) or a server or session set read-only.
var ErrReadOnly = errors.New("the database takes no writes (a standby, or read-only)")

// CanWrite reports whether this process could write now: nil, ErrReadOnly,
// or the error reaching the database. On PostgreSQL it asks a pooled
// connection whether its transactions are read-only (`transaction_read_only`
// is on on a standby, and wherever default_transaction_read_only is set), so
// a process whose connections all point at a standby is not ready even though
// every ping succeeds. SQLite takes writes whenever it opens.
func (db *DB) CanWrite(ctx context.Context) error {
	if db.dialect != Postgres {
		return db.Ping(ctx)
	}
	var ro string
	if err := db.sql.QueryRowContext(ctx, "SHOW transaction_read_only").Scan(&ro); err != nil {
		return translate(err)
	}
	if ro == "on" {
		return ErrReadOnly
	}
	return nil
}
