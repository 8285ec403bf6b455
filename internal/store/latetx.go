package store

import (
	"context"
	"database/sql"
	"runtime"
	"sync"
)

// lateTx is a unit's transaction on SQLite, begun as late as it can be.
//
// SQLite has one writer, and a transaction holds it from BEGIN to COMMIT:
// whatever Go work a request does between its first write and its commit
// (building the next statement, rendering its answer) is time every other
// writer waits. So a unit's SQLite transaction takes the writer only when
// it must: statements run with Tx.ExecLater wait in Go, and the writer is
// taken (and the transaction begun, or joined: unitgroup.go) at the first
// statement that needs an answer (Exec, a query) or at the commit, and what
// waits runs first. A create whose writes are all ExecLater holds the writer
// only for its statements and its commit.
//
// As on PostgreSQL (pipeline.go), a statement run later fails where it runs,
// not where it was called: the failure is reported to the statement or
// commit that ran it, and the transaction can then only be rolled back
// (ErrLaterFailed).
type lateTx struct {
	db *DB

	mu      sync.Mutex
	pending []queued
	real    *sql.Tx
	// shared is the parked transaction (group commit, unitgroup.go) real
	// belongs to, with other units' finished work in it; nil when this
	// transaction began real itself.
	shared *parkedTx
	locked bool  // holds the writer
	broken error // a statement run later failed, or BEGIN did
	done   bool
	// careful is set for a unit's transaction after the unit committed a
	// recovery point (Unit.Checkpoint: such a request cannot simply run
	// again) and for a careful unit's (UnitHooks.Careful: a request run again
	// because another's rollback undid it): the transaction goes on in a
	// parked one under a savepoint (its rollback undoes its own work alone)
	// and never parks. bare is set
	// when the transaction went on in a parked one without a savepoint: its
	// rollback rolls back the whole shared transaction (unitgroup.go).
	careful, bare bool
	// entry is the statement run first when the transaction takes the
	// writer (Tx.Enter); untouched is set when it changed no row: nothing
	// of this transaction ran, and its rollback undoes no one else's work.
	entry     *entryStmt
	untouched bool
}

// entryStmt is a transaction's entry (Tx.Enter).
type entryStmt struct {
	q     string
	args  []any
	unmet error
	ok    func()
}

// enter sets the entry; it reports false when the writer is already taken.
func (t *lateTx) enter(q string, args []any, unmet error, ok func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.real != nil || t.broken != nil || t.done {
		return false
	}
	t.entry = &entryStmt{q: q, args: args, unmet: unmet, ok: ok}
	return true
}

// take takes the writer now, running what waits.
func (t *lateTx) take(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.acquire(ctx)
}

// later queues a statement until the transaction holds the writer; once it
// does, the statement runs at once.
func (t *lateTx) later(ctx context.Context, q string, args []any) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken != nil {
		return t.broken
	}
	if t.done {
		return sql.ErrTxDone
	}
	if t.real == nil {
		t.pending = append(t.pending, queued{q: q, args: args})
		return nil
	}
	_, err := t.real.ExecContext(t.stmtCtx(ctx), q, args...)
	return translate(err)
}

// stmtCtx shields a statement in another unit's parked transaction from
// this request's cancelled context: SQLite rolls back the whole transaction
// when a write statement in it is interrupted, which would undo the others'
// finished work. A context cancelled before the statement starts is still
// honoured.
func (t *lateTx) stmtCtx(ctx context.Context) context.Context {
	if t.shared != nil && ctx.Err() == nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// acquire takes the writer, begins (or joins) the transaction and runs what
// waits. An error from taking the writer (ctx ended) leaves the
// transaction as it was; any later failure breaks it. The caller holds mu.
func (t *lateTx) acquire(ctx context.Context) error {
	if t.broken != nil {
		return t.broken
	}
	if t.done {
		return sql.ErrTxDone
	}
	if t.real != nil {
		return nil
	}
	db := t.db
	if err := db.lockWrite(ctx); err != nil {
		return err
	}
	t.locked = true
	bg := context.WithoutCancel(ctx)
	if p := db.takeParked(); p != nil {
		// Go on in the transaction other units parked: without a
		// savepoint (a rollback of this unit then aborts them all, and
		// their requests run again), unless this unit is careful.
		if t.careful {
			if _, err := p.stx.ExecContext(bg, "SAVEPOINT payd_unit"); err != nil {
				db.abortParked(p)
				t.unlock()
				t.broken = translate(err)
				return t.broken
			}
		} else {
			t.bare = true
		}
		t.shared, t.real = p, p.stx
	} else {
		var err error
		for attempt := 1; ; attempt++ {
			// A BEGIN that meets a dead pooled connection changed nothing:
			// another connection.
			var stx *sql.Tx
			if stx, err = db.beginTx(bg, nil); err == nil {
				t.real = stx
				break
			}
			if err = translate(err); attempt == maxConnTries || !IsConnLost(err) {
				break
			}
		}
		if err != nil {
			t.unlock()
			t.broken = err
			return err
		}
	}
	if e := t.entry; e != nil {
		t.entry = nil
		res, err := t.real.ExecContext(t.stmtCtx(ctx), e.q, e.args...)
		if err != nil {
			t.pending = nil
			t.broken = errorJoin(ErrLaterFailed, translate(err))
			return t.broken
		}
		if n, _ := res.RowsAffected(); n != 1 {
			// The statement changed nothing, so neither has this
			// transaction: nothing else of it runs.
			t.pending, t.untouched, t.broken = nil, true, e.unmet
			return t.broken
		}
		if e.ok != nil {
			e.ok()
		}
	}
	for _, s := range t.pending {
		if _, err := t.real.ExecContext(t.stmtCtx(ctx), s.q, s.args...); err != nil {
			t.pending = nil
			t.broken = errorJoin(ErrLaterFailed, translate(err))
			return t.broken
		}
	}
	t.pending = nil
	return nil
}

func (t *lateTx) unlock() {
	if t.locked {
		t.db.unlockWrite()
		t.locked = false
	}
}

func (t *lateTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.acquire(ctx); err != nil {
		return nil, err
	}
	return t.real.ExecContext(t.stmtCtx(ctx), q, args...)
}

func (t *lateTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.acquire(ctx); err != nil {
		return nil, err
	}
	return t.real.QueryContext(t.stmtCtx(ctx), q, args...)
}

func (t *lateTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.acquire(ctx); err != nil {
		// *sql.Row carries no error of ours: a query that fails says so
		// (the table does not exist), and the transaction keeps the cause.
		// It runs on the transaction's own connection when there is one:
		// taking another from the pool while holding the writer could wait
		// for a connection held by someone waiting for the writer.
		const fail = `SELECT 1 FROM "store: the transaction could not run its statements"`
		if t.real != nil {
			return t.real.QueryRowContext(context.WithoutCancel(ctx), fail)
		}
		return t.db.sql.QueryRowContext(ctx, fail)
	}
	return t.real.QueryRowContext(t.stmtCtx(ctx), q, args...)
}

// empty reports whether the transaction neither holds nor waits with anything. The
// caller holds mu.
func (t *lateTx) empty() bool { return t.real == nil && len(t.pending) == 0 && t.entry == nil }

// Commit commits the transaction (with the others in it when it is shared),
// as Unit.commit does for a unit's last commit but without parking it.
func (t *lateTx) Commit() error { return t.commitGrouped(context.Background(), false) }

// Rollback undoes the transaction's work and releases the writer. In a
// shared transaction it undoes this unit's work alone when the unit is
// careful (its savepoint) or changed nothing (its entry found its row
// taken), and otherwise the whole shared transaction (unitgroup.go).
func (t *lateTx) Rollback() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rollbackLocked()
	return nil
}

func (t *lateTx) rollbackLocked() {
	t.pending, t.entry = nil, nil
	if p := t.shared; p != nil && t.bare && t.untouched {
		// Nothing of this unit is in the shared transaction: it goes on
		// for the others.
		t.db.handOn(p)
	} else if p != nil && t.bare {
		// No savepoint marks where this unit's work began: undo the whole
		// shared transaction; the units parked in it learn that nothing
		// of theirs committed (errGroupAborted) and run again.
		t.db.abortParked(p)
	} else if p != nil {
		bg := context.Background()
		_, err := p.stx.ExecContext(bg, "ROLLBACK TO payd_unit")
		if err == nil {
			_, err = p.stx.ExecContext(bg, "RELEASE payd_unit")
		}
		if err != nil {
			t.db.abortParked(p)
		} else {
			t.db.handOn(p)
		}
	} else if t.real != nil {
		t.real.Rollback()
	}
	t.real, t.shared, t.done = nil, nil, true
	t.unlock()
}

// lateErr is the failure that left t unusable, or nil.
func (t *lateTx) lateErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.broken
}

// commitGrouped runs what waits and commits: it parks the transaction for a
// writer that waits (when end: the unit's last commit) or commits it with
// every unit parked in it, and returns the outcome of that commit
// (unitgroup.go). A transaction that never wrote commits nothing.
func (t *lateTx) commitGrouped(ctx context.Context, end bool) error {
	t.mu.Lock()
	if t.empty() && t.broken == nil && !t.done {
		t.done = true
		t.mu.Unlock()
		return nil
	}
	if err := t.acquire(ctx); err != nil {
		t.rollbackLocked()
		t.mu.Unlock()
		return err
	}
	db := t.db
	p := t.shared
	if p == nil {
		p = &parkedTx{stx: t.real}
	}
	me := parkedMember{ctx: ctx, done: make(chan error, 1)}
	p.members = append(p.members, me)
	t.real, t.shared, t.done = nil, nil, true
	if end && !t.careful && len(p.members) < maxGroup {
		// Park the transaction for the next writer. When one waits it
		// takes the transaction next. When none waits yet, this goroutine
		// releases the writer and yields once (the goroutines ready to run
		// go first, this one runs again after them), so that requests on
		// their way to the writer can reach it and go on in this
		// transaction rather than in one of their own; back, it commits
		// the transaction itself if nobody took it meanwhile. A commit
		// shared by more units costs each less: its log frames are mostly
		// the same right-hand pages of the same B-trees, written once for
		// all. With nothing else ready to run (one client) the yield
		// returns at once and the commit follows.
		db.parked = p
		waiting := db.writeWaiters.Load() > 0
		t.unlock()
		t.mu.Unlock()
		if !waiting {
			runtime.Gosched()
			db.settleOwn(p)
		}
		return awaitParked(me)
	}
	err := db.commitParked(p)
	t.unlock()
	t.mu.Unlock()
	return err
}
