package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/stdlib"
)

// Row is one row a read returns: Scan copies its columns into dest, or
// returns sql.ErrNoRows when there was none (as *sql.Row does).
type Row interface {
	Scan(dest ...any) error
}

// QueryRowByKey is QueryRow for a read of one row by a unique key (a few
// microseconds of work), the read of an object a GET answers. As QueryRow,
// with a context whose request's unit has a transaction open it panics with
// ErrOutsideUnit. It spares the read the parts of database/sql that a key
// read does not need:
//
//   - On SQLite it does not watch ctx for cancellation: watching cost two
//     goroutines per read (database/sql's and the driver's) for a statement
//     too short to be worth interrupting, and a reader under WAL never waits
//     for a writer.
//   - On PostgreSQL, whose reads cross a network that may stall, it watches
//     ctx as QueryRow does, but reads through pgx itself on a pooled
//     connection, which scans the row straight into dest without
//     database/sql's per-column driver values.
func (db *DB) QueryRowByKey(ctx context.Context, q string, args ...any) Row {
	if db.dialect != Postgres {
		return db.QueryRow(context.WithoutCancel(ctx), q, args...) // keeps ctx's values: the unit check still sees them
	}
	if err := db.outsideUnit(ctx, false); err != nil {
		panic(err)
	}
	return &keyRow{db: db, ctx: ctx, q: db.dialect.Rebind(q), args: args}
}

// keyRow runs its read when scanned.
type keyRow struct {
	db   *DB
	ctx  context.Context
	q    string
	args []any
}

func (r *keyRow) Scan(dest ...any) error {
	for attempt := 1; ; attempt++ {
		err := r.scanOnce(dest)
		if attempt < maxConnTries && IsConnLost(err) && r.ctx.Err() == nil {
			continue // a read on a connection the server had closed: on another
		}
		if errors.Is(err, sql.ErrNoRows) {
			return sql.ErrNoRows // pgx's wraps it; callers compare with ==
		}
		return err
	}
}

func (r *keyRow) scanOnce(dest []any) error {
	conn, err := r.db.sql.Conn(r.ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: key read on a %T connection", dc)
		}
		return c.Conn().QueryRow(r.ctx, r.q, r.args...).Scan(dest...)
	})
}
