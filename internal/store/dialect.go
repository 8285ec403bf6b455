package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Dialect is one of the two engines. Everything that differs between them
// lives in this file and in the two migration folders.
type Dialect int

// The engines payd runs on.
const (
	SQLite Dialect = iota + 1
	Postgres
)

func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

var rebindCache sync.Map // string -> string

// Rebind rewrites ? placeholders to $1, $2, ... for PostgreSQL. Question
// marks inside single-quoted literals are left alone.
func (d Dialect) Rebind(q string) string {
	if d != Postgres || !strings.Contains(q, "?") {
		return q
	}
	if v, ok := rebindCache.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	inQuote := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			inQuote = !inQuote
			b.WriteByte(c)
		case c == '?' && !inQuote:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	rebindCache.Store(q, out)
	return out
}

// ValuesParam is the placeholder of a value of sqlType in the first row of
// a VALUES list used as a table (UPDATE ... FROM (VALUES ...)): CAST(? AS
// sqlType) on PostgreSQL, which types the list's columns from its first
// row; a bare ? on SQLite, where a cast makes the list a compound (one row
// UNION ALL the rest) of a size the planner does not know, so that it may
// read the whole updated table, or a partial index of it, rather than look
// each row up by its key. The column written applies its own type there.
func (d Dialect) ValuesParam(sqlType string) string {
	if d == Postgres {
		return "CAST(? AS " + sqlType + ")"
	}
	return "?"
}

// ForUpdateSkipLocked is the locking clause for claiming rows that several
// processes compete for. SQLite has one writer at a time and an immediate
// transaction already holds the write lock, so it needs none.
func (d Dialect) ForUpdateSkipLocked() string {
	if d == Postgres {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// ForUpdate locks the selected rows until the transaction ends (PostgreSQL);
// SQLite's immediate transactions are already exclusive for writers.
func (d Dialect) ForUpdate() string {
	if d == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// ForNoKeyUpdate locks the selected rows against other writers of them
// until the transaction ends (PostgreSQL), without blocking inserts of rows
// that reference them; SQLite's immediate transactions need nothing.
func (d Dialect) ForNoKeyUpdate() string {
	if d == Postgres {
		return " FOR NO KEY UPDATE"
	}
	return ""
}

// ForShare locks the selected rows against writers until the transaction
// ends (PostgreSQL), while other readers may share them; SQLite's immediate
// transactions need nothing.
func (d Dialect) ForShare() string {
	if d == Postgres {
		return " FOR SHARE"
	}
	return ""
}

// AdvisoryLock serialises the transactions that take the same key: on
// PostgreSQL it waits for pg_advisory_xact_lock on the key's hash, held
// until tx ends. On SQLite a transaction holding the one writer is alone
// already: a unit's transaction, which takes the writer late (latetx.go),
// takes it here, so that what it reads from here on is as exclusive as on
// PostgreSQL.
func (tx *Tx) AdvisoryLock(ctx context.Context, key string) error {
	return tx.advisoryLock(ctx, "hashtext(?)", key)
}

// AdvisoryLockID is AdvisoryLock on a numeric key, for a lock whose key
// processes of an earlier version already take by number (a rolling deploy
// then keeps both versions serialised on it).
func (tx *Tx) AdvisoryLockID(ctx context.Context, id int64) error {
	return tx.advisoryLock(ctx, "?", id)
}

func (tx *Tx) advisoryLock(ctx context.Context, keyExpr string, key any) error {
	if l, ok := tx.tx.(*lateTx); ok {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.acquire(ctx)
	}
	if tx.dialect != Postgres {
		return nil
	}
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock("+keyExpr+")", key)
	return err
}

// translate maps driver errors onto the shared ones.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sqlNoRows) {
		return ErrNotFound
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23505" {
		return errorJoin(ErrConflict, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return errorJoin(ErrConflict, err)
		}
	}
	return err
}

// isTransient reports whether the whole transaction may simply be run again.
func isTransient(err error) bool {
	if errors.Is(err, errGroupAborted) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "40001" || pg.Code == "40P01"
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	return false
}

// IsConnLost reports whether err means the database connection died (the
// server restarted, or an operator ran pg_terminate_backend): the
// transaction on it is gone, and nothing of it was applied unless the error
// came from COMMIT itself (ErrCommitUnknown).
func IsConnLost(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		// Class 08: connection exception; 57P01-57P03: the server is
		// shutting down, crashed or not yet accepting connections.
		// 53300: too many connections, refused at connect (nothing ran).
		return strings.HasPrefix(pg.Code, "08") || pg.Code == "57P01" || pg.Code == "57P02" || pg.Code == "57P03" || pg.Code == "53300"
	}
	var op *net.OpError
	return errors.As(err, &op)
}

// IsUnavailable reports whether err means that no database accepting
// writes can be reached now, and one may later: the connection was refused
// or lost, every host of the URL is a standby (target_session_attrs=
// read-write), or a write reached a read-only server (SQLSTATE 25006). A
// wrong password or a missing database is not that.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		if strings.HasPrefix(pg.Code, "28") || pg.Code == "3D000" {
			return false
		}
		if pg.Code == "25006" {
			return true
		}
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || IsConnLost(err)
}

type joined struct{ kind, cause error }

func (j joined) Error() string        { return j.kind.Error() + ": " + j.cause.Error() }
func (j joined) Is(target error) bool { return target == j.kind }
func (j joined) Unwrap() error        { return j.cause }

func errorJoin(kind, cause error) error { return joined{kind, cause} }
