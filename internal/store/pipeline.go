package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Pipelined transactions on PostgreSQL.
//
// Each statement of a transaction sent on its own costs a round trip to the
// server, and on a small machine the round trips (two context switches and
// four system calls each) cost more than the statements. A PostgreSQL write
// transaction therefore sends its statements in batches (pgx's pipeline,
// one network write and one Sync per batch):
//
//   - BEGIN is not sent on its own: it waits for the transaction's first
//     statement and goes with it;
//   - a statement run with Tx.ExecLater waits too, for the next statement
//     that needs an answer (an Exec whose result is read, a query) or for
//     COMMIT, and goes with it;
//   - COMMIT goes with whatever waits.
//
// A create whose writes are all ExecLater is then BEGIN plus its claim in one
// round trip and the rest plus COMMIT in another.
//
// A statement run later cannot fail where it is called: if it fails, the
// batch that carries it reports the failure to whichever statement or commit
// sent it, and the transaction is then unusable (every later statement and
// the commit return the same error; see ErrLaterFailed). ExecLater is for
// statements that only fail when something is wrong (a lost connection, a
// broken invariant), not for those whose failure a caller handles.
//
// When the batch that carries BEGIN meets a connection the server had
// closed (a restart, pg_terminate_backend), nothing of the transaction was
// applied, and the batch is sent again on another connection.
//
// Queries (Query, QueryRow) go through database/sql on the same connection,
// after what waits has been sent.

// ErrLaterFailed marks the failure of a statement run with ExecLater, met by
// a later statement or the commit: the transaction can only be rolled back.
var ErrLaterFailed = errors.New("store: a statement run later failed")

// errRolledBack is a COMMIT the server answered with ROLLBACK.
var errRolledBack = errors.New("store: the transaction was rolled back instead of committed")

// txConn is what a Tx runs statements on: a database/sql transaction
// (SQLite, and read-only snapshots) or a pipelined PostgreSQL transaction.
type txConn interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	Commit() error
	Rollback() error
}

type queued struct {
	q    string
	args []any
	// unmet, when set, is what the statement's run reports when it does
	// not affect exactly want rows (ExecLaterExpect).
	want  int64
	unmet error
}

// pipeTx is a PostgreSQL transaction on one pooled connection, sending its
// statements in batches.
type pipeTx struct {
	db  *DB
	ctx context.Context // the transaction's context, for COMMIT and ROLLBACK

	mu      sync.Mutex // a Tx may be shared by goroutines, as a *sql.Tx may
	conn    *sql.Conn
	pg      *pgx.Conn
	pending []queued
	sent    bool  // a batch of this transaction reached the server
	begun   bool  // BEGIN succeeded: the server holds a transaction
	broken  error // a statement run later failed, or the connection died
	// unmet is the first expectation of ExecLaterExpect that a batch found
	// unmet: the transaction is sound, but the fn that queued the statement
	// must fail (settle reports it) and be rolled back.
	unmet error
	done  bool
}

// beginPipe takes a connection from the pool for a new transaction; BEGIN
// waits for the first statement.
func (db *DB) beginPipe(ctx context.Context, isolation string) (*pipeTx, error) {
	p := &pipeTx{db: db, ctx: ctx}
	if err := p.connect(ctx); err != nil {
		return nil, err
	}
	begin := "BEGIN"
	if isolation != "" {
		begin += " ISOLATION LEVEL " + isolation
	}
	p.pending = append(p.pending, queued{q: begin})
	return p, nil
}

func (p *pipeTx) connect(ctx context.Context) error {
	conn, err := p.db.sql.Conn(ctx)
	if err != nil {
		return translate(err)
	}
	var pg *pgx.Conn
	if err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: pipelined transaction on a %T connection", dc)
		}
		pg = c.Conn()
		return nil
	}); err != nil {
		conn.Close()
		return err
	}
	p.conn, p.pg = conn, pg
	return nil
}

// release returns the connection to the pool, or closes it when bad.
func (p *pipeTx) release(bad bool) {
	if p.conn == nil {
		return
	}
	if bad {
		p.conn.Raw(func(any) error { return driver.ErrBadConn }) // database/sql closes it
	}
	p.conn.Close()
	p.conn, p.pg = nil, nil
}

// later queues a statement for the next batch.
func (p *pipeTx) later(q string, args []any) error { return p.queue(queued{q: q, args: args}) }

// laterExpect queues a statement whose row count must be want.
func (p *pipeTx) laterExpect(q string, args []any, want int64, unmet error) error {
	return p.queue(queued{q: q, args: args, want: want, unmet: unmet})
}

func (p *pipeTx) queue(s queued) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken != nil {
		return p.broken
	}
	if p.done {
		return sql.ErrTxDone
	}
	p.pending = append(p.pending, s)
	return nil
}

// settle sends what waits if an expectation is among it, and returns the
// first unmet expectation, if any.
func (p *pipeTx) settle(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.pending {
		if s.unmet != nil {
			if _, err := p.send(ctx, nil); err != nil {
				return err
			}
			break
		}
	}
	return p.unmet
}

// rollbackTo rolls back to a savepoint, with what waits (which the
// rollback undoes, so an expectation among it no longer matters), and
// forgets an unmet expectation: what queued it is undone.
func (p *pipeTx) rollbackTo(ctx context.Context, sp string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.pending {
		p.pending[i].unmet = nil
	}
	_, err := p.send(ctx, &queued{q: "ROLLBACK TO SAVEPOINT " + sp})
	if err == nil {
		p.unmet = nil
	}
	return err
}

// send sends what waits, followed by last (if not nil), as one batch and
// returns last's command tag. The caller holds mu.
func (p *pipeTx) send(ctx context.Context, last *queued) (pgconn.CommandTag, error) {
	var lasts []queued
	if last != nil {
		lasts = []queued{*last}
	}
	tags, err := p.sendAll(ctx, lasts)
	if err != nil || last == nil {
		return pgconn.CommandTag{}, err
	}
	return tags[0], nil
}

// sendAll sends what waits, followed by lasts, as one batch and returns the
// command tags of lasts. A failure of one of lasts is the caller's (the
// transaction is aborted until the caller rolls back to a savepoint); a
// failure of a statement run later, or a lost connection, breaks the
// transaction. The caller holds mu.
func (p *pipeTx) sendAll(ctx context.Context, lasts []queued) ([]pgconn.CommandTag, error) {
	if p.broken != nil {
		return nil, p.broken
	}
	if p.done {
		return nil, sql.ErrTxDone
	}
	commits := len(lasts) > 0 && lasts[len(lasts)-1].q == "COMMIT"
	for attempt := 1; ; attempt++ {
		tags, failedLater, unmet, err := p.sendOnce(ctx, lasts)
		if err == nil {
			p.pending, p.sent = p.pending[:0], true
			if unmet != nil {
				// Everything ran; the caller's fn must fail all the same.
				if p.unmet == nil {
					p.unmet = unmet
				}
				return nil, unmet
			}
			return tags, nil
		}
		err = translate(err)
		if !p.sent && IsConnLost(err) && attempt < maxConnTries && ctx.Err() == nil &&
			(!commits || pgconn.SafeToRetry(err)) {
			// The batch carrying BEGIN met a dead connection: nothing of
			// the transaction was applied (a batch that also carries
			// COMMIT only if it was not sent at all). The same batch on
			// another connection.
			p.begun = false
			p.release(true)
			if cerr := p.connect(ctx); cerr != nil {
				p.broken = cerr
				return nil, cerr
			}
			continue
		}
		p.pending, p.sent = p.pending[:0], true
		switch {
		case IsConnLost(err):
			p.broken = err
		case failedLater:
			p.broken = errorJoin(ErrLaterFailed, err)
		default:
			return nil, err // one of lasts failed
		}
		return nil, p.broken
	}
}

// sendOnce sends one batch; failedLater reports that a statement run later
// (not BEGIN, not one of lasts) failed, unmet the first expectation of a
// statement run later that its row count did not meet.
func (p *pipeTx) sendOnce(ctx context.Context, lasts []queued) (tags []pgconn.CommandTag, failedLater bool, unmet, err error) {
	if len(p.pending) == 0 && len(lasts) == 1 {
		tag, err := p.pg.Exec(ctx, lasts[0].q, lasts[0].args...)
		return []pgconn.CommandTag{tag}, false, nil, err
	}
	b := &pgx.Batch{}
	for _, s := range p.pending {
		b.Queue(s.q, s.args...)
	}
	for _, s := range lasts {
		b.Queue(s.q, s.args...)
	}
	br := p.pg.SendBatch(ctx, b)
	for i, s := range p.pending {
		var tag pgconn.CommandTag
		tag, err = br.Exec()
		if i == 0 && !p.sent {
			p.begun = err == nil // pending[0] is BEGIN
		}
		if err != nil {
			failedLater = i > 0 || p.sent
			break
		}
		if s.unmet != nil && unmet == nil && tag.RowsAffected() != s.want {
			unmet = s.unmet
		}
	}
	for range lasts {
		if err != nil {
			break
		}
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err == nil {
			tags = append(tags, tag)
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tags, failedLater, unmet, err
}

// execAll sends what waits and stmts as one batch and returns the rows each
// of stmts affected.
func (p *pipeTx) execAll(ctx context.Context, stmts []Stmt) ([]int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lasts := make([]queued, len(stmts))
	for i, s := range stmts {
		lasts[i] = queued{q: s.Query, args: s.Args}
	}
	tags, err := p.sendAll(ctx, lasts)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(tags))
	for i, t := range tags {
		out[i] = t.RowsAffected()
	}
	return out, nil
}

func (p *pipeTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	tag, err := p.send(ctx, &queued{q: q, args: args})
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

// flush sends what waits before a query that must see it. The caller
// holds mu.
func (p *pipeTx) flush(ctx context.Context) error {
	if len(p.pending) == 0 {
		if p.broken != nil {
			return p.broken
		}
		return nil
	}
	_, err := p.send(ctx, nil)
	return err
}

func (p *pipeTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	if p.done {
		return nil, sql.ErrTxDone
	}
	return p.conn.QueryContext(ctx, q, args...)
}

func (p *pipeTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flush(ctx)
	if p.conn == nil {
		// *sql.Row carries no error of ours: a query that fails says so.
		return p.db.sql.QueryRowContext(ctx, "SELECT CAST('store: the transaction has ended' AS int)")
	}
	// After a failed flush the query fails on the aborted transaction (or
	// the dead connection) and the transaction keeps the cause.
	return p.conn.QueryRowContext(ctx, q, args...)
}

// Commit sends what waits and COMMIT in one batch.
func (p *pipeTx) Commit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return sql.ErrTxDone
	}
	if p.broken != nil {
		err := p.broken
		p.rollbackLocked()
		return err
	}
	for _, s := range p.pending {
		if s.unmet != nil {
			// An expectation never goes with COMMIT: InTx settles it
			// before committing; this is for a caller that did not.
			if _, err := p.send(p.ctx, nil); err != nil {
				if !IsConnLost(err) {
					p.rollbackLocked()
				}
				return err
			}
			break
		}
	}
	if p.unmet != nil {
		err := p.unmet
		p.rollbackLocked()
		return err
	}
	if !p.sent && len(p.pending) == 1 {
		// Nothing but BEGIN: nothing to commit.
		p.done = true
		p.release(false)
		return nil
	}
	tag, err := p.send(p.ctx, &queued{q: "COMMIT"})
	if err == nil && tag.String() != "COMMIT" {
		// The server rolled the transaction back instead (an earlier
		// statement's failure aborted it).
		err = fmt.Errorf("%w (COMMIT answered %q)", errRolledBack, tag.String())
	}
	if err != nil {
		if !IsConnLost(err) {
			// A statement of the batch failed before COMMIT ran.
			p.rollbackLocked()
			return err
		}
		p.done = true
		p.release(true)
		return err
	}
	p.done = true
	p.release(false)
	return nil
}

// Rollback ends the transaction without keeping anything.
func (p *pipeTx) Rollback() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rollbackLocked()
}

func (p *pipeTx) rollbackLocked() error {
	if p.done {
		return sql.ErrTxDone
	}
	p.done = true
	p.pending = nil
	if !p.begun {
		p.release(false)
		return nil
	}
	if p.broken != nil && IsConnLost(p.broken) {
		p.release(true)
		return nil
	}
	_, err := p.pg.Exec(context.WithoutCancel(p.ctx), "ROLLBACK")
	p.release(err != nil)
	return err
}
