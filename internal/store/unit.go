package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"
	"time"
)

// A Unit is one request's unit of work: every Work.InTx (and Work.Exec,
// Query, QueryRow) made through its Work (DB.Within with the request's
// Claim, or Unit.Work) joins one database transaction, so all of a
// request's writes commit together, once, when the request's owner (the
// idempotency middleware) calls Commit. Nothing joins it through a context:
// the context NewUnit returns carries it only so that a statement run
// through the plain DB while it is open fails (ErrOutsideUnit) instead of
// committing apart from the request.
//
// The transaction opens lazily, at the first write: a request that validates,
// sleeps or calls a provider before it writes holds no connection and, on
// SQLite, not the writer (which a unit takes later still: latetx.go). (The one exception is an API route marked
// ClaimAtOnce, whose key is claimed on PostgreSQL as the request starts: its
// handler must write before any slow work.) Each joined InTx runs under a
// savepoint, so a fn that fails is undone alone and the caller can go on
// (answer 4xx, try another step) exactly as if its own transaction had rolled
// back; a nested InTx is a nested savepoint. The outermost fn in a
// transaction that holds nothing yet (no Open hook write, no earlier fn that
// succeeded) needs no savepoint: if it fails, the whole transaction is rolled
// back and the unit's next write opens another. A failure that breaks the
// transaction itself
// (a lost connection, a deadlock, SQLite busy) poisons the unit: every later
// call returns that error and the owner rolls the whole unit back (and may run
// the request again, see Retryable).
//
// Checkpoint commits what the unit wrote so far and leaves it open for more
// (the "atomic phases" of a request that must call a provider between two
// writes); the next write opens a new transaction.
type Unit struct {
	db    *DB
	hooks UnitHooks

	mu     sync.Mutex
	stx    txConn // on SQLite a lateTx (latetx.go)
	tx     *Tx
	closed bool
	broken error // sticky failure that poisoned the transaction
	wrote  bool  // a joined fn succeeded in the open transaction
	// running counts the joined fns running now (nested InTx calls): only
	// the outermost may run without a savepoint.
	running int
	sp      int // savepoint names
	opens   int // transactions opened
	phases  int // transactions committed
	// careful: the unit's request must not be rolled back by another's
	// (unitgroup.go); see Careful.
	careful bool
}

// UnitHooks are the owner's statements in each transaction of a unit.
type UnitHooks struct {
	// Open runs first in every transaction the unit opens; first is true in
	// the unit's first. The idempotency middleware claims its key here, so
	// the claim and the effect commit together; an error here fails the
	// write that opened the transaction, and the unit with it.
	Open func(ctx context.Context, tx *Tx, first bool) error
	// Careful makes the unit careful on SQLite: it goes on in another
	// unit's parked transaction under a savepoint and never parks its own,
	// so another unit's rollback cannot undo its work (unitgroup.go). The
	// owner of a request whose run was undone by another unit's rollback
	// (IsGroupAborted) runs it again careful: another's failures cost it at
	// most one run.
	Careful bool
}

type unitKey struct{}

// NewUnit returns a new unit of work on db, and ctx marked with it: a
// statement run through the plain DB with that context while the unit is
// open fails with ErrOutsideUnit (the request's statements go through
// u.Work()).
func (db *DB) NewUnit(ctx context.Context, hooks UnitHooks) (context.Context, *Unit) {
	u := &Unit{db: db, hooks: hooks, careful: hooks.Careful}
	return context.WithValue(ctx, unitKey{}, u), u
}

// IsGroupAborted reports whether err is the failure of a unit whose work was
// rolled back with a shared SQLite transaction that another unit rolled back.
func IsGroupAborted(err error) bool { return errors.Is(err, errGroupAborted) }

// openTx returns the unit's transaction if one is open.
func (u *Unit) openTx() *Tx {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed || u.broken != nil {
		return nil
	}
	return u.tx
}

// Err is the failure that poisoned the unit, or nil.
func (u *Unit) Err() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.broken
}

// Wrote reports whether a write is waiting in the open transaction.
func (u *Unit) Wrote() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tx != nil && u.wrote
}

// Opened reports whether the unit has an open transaction.
func (u *Unit) Opened() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tx != nil
}

// Phases is how many of the unit's transactions committed (by Checkpoint).
func (u *Unit) Phases() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.phases
}

// Retryable reports whether the whole request may simply be run again: the
// unit failed on a lost connection or a transient conflict, and nothing of it
// has committed.
func (u *Unit) Retryable() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.broken != nil && u.phases == 0 && (isTransient(u.broken) || IsConnLost(u.broken))
}

// Open begins the unit's transaction now, running the Open hook, rather
// than at the first write.
func (u *Unit) Open(ctx context.Context) error {
	_, err := u.open(ctx)
	return err
}

// open begins the unit's transaction if none is open and runs the Open hook.
func (u *Unit) open(ctx context.Context) (*Tx, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.broken != nil {
		return nil, u.broken
	}
	if u.tx != nil {
		return u.tx, nil
	}
	db := u.db
	// The unit outlives any one call; its owner ends it, not a cancelled
	// client connection.
	bg := context.WithoutCancel(ctx)
	var stx txConn
	var err error
	if db.writeLock != nil {
		// SQLite: the writer is taken when a statement needs it (latetx.go).
		stx = &lateTx{db: db, careful: u.careful || u.phases > 0}
	}
	for attempt := 1; stx == nil; attempt++ {
		// A BEGIN that meets a dead pooled connection changed nothing:
		// another connection. (On PostgreSQL BEGIN goes with the first
		// statement, and the pipeline tries another connection itself.)
		if stx, err = db.begin(bg); err == nil || attempt == maxConnTries || !IsConnLost(err) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	u.stx = stx
	u.tx = db.newTx(stx)
	u.wrote = false
	first := u.opens == 0
	u.opens++
	if u.hooks.Open != nil {
		if err := u.hooks.Open(bg, u.tx, first); err != nil {
			u.broken = err
			u.rollbackLocked()
			return nil, err
		}
	}
	return u.tx, nil
}

// fail poisons the unit with err (the transaction can no longer be used).
func (u *Unit) fail(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.broken == nil {
		u.broken = err
	}
	u.rollbackLocked()
}

func (u *Unit) rollbackLocked() {
	if u.stx != nil {
		u.stx.Rollback() // a lateTx undoes this unit's work alone
	}
	u.stx, u.tx, u.wrote = nil, nil, false
}

// run runs fn under a savepoint of the unit's transaction (none when the
// transaction holds nothing yet).
func (u *Unit) run(ctx context.Context, fn func(tx *Tx) error) (err error) {
	tx, err := u.open(ctx)
	if err != nil {
		return err
	}
	bg := context.WithoutCancel(ctx)
	// A transaction that holds nothing yet (no Open hook statement, no
	// earlier fn that succeeded in it) and no fn running in it (this is not
	// a nested InTx) holds nothing a failing fn must not undo: fn runs
	// without a savepoint, and if it fails the transaction is rolled back
	// whole and the next write opens a new one. This spares the common
	// request (one InTx) a savepoint: on PostgreSQL a subtransaction for its
	// writes, on SQLite a copy of every page it changes.
	u.mu.Lock()
	bare := u.running == 0 && !u.wrote && tx.writes.Load() == 0
	u.running++
	sp := ""
	if !bare {
		u.sp++
		sp = "payd_sp" + strconv.Itoa(u.sp)
	}
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.running--
		u.mu.Unlock()
	}()
	if !bare {
		// An expectation an enclosing fn queued is settled first: rolling
		// back to this savepoint must not forget it.
		if err := tx.settle(ctx); err != nil {
			if tx.broken() != nil || isTransient(err) || IsConnLost(err) {
				u.fail(err)
			}
			return err
		}
		if err := tx.ExecLater(bg, "SAVEPOINT "+sp); err != nil {
			u.fail(err)
			return err
		}
	}
	after := len(tx.after)
	defer func() {
		if p := recover(); p != nil {
			u.fail(errors.New("store: panic inside a unit of work"))
			panic(p)
		}
	}()
	if err = tx.call(ctx, fn); err != nil {
		if b := tx.broken(); b != nil {
			// A statement run later (perhaps an earlier fn's) failed:
			// rolling back to this savepoint would not undo that.
			u.fail(b)
			return b
		}
		if isTransient(err) || IsConnLost(err) {
			u.fail(err)
			return err
		}
		if bare {
			u.mu.Lock()
			if u.tx == tx {
				u.rollbackLocked()
				u.opens-- // the next transaction is the one this would have been
			}
			u.mu.Unlock()
			return err
		}
		if rerr := tx.rollbackTo(bg, sp); rerr != nil {
			u.fail(translate(rerr))
			return err
		}
		tx.after = tx.after[:after]
		return err
	}
	// The savepoint is not released: a later ROLLBACK TO an earlier one, or
	// the commit, ends it anyway, and a RELEASE would cost a round trip to
	// the database per joined InTx for nothing.
	u.mu.Lock()
	u.wrote = true
	u.mu.Unlock()
	return nil
}

// runLast runs fn in the unit's transaction (opening one if needed) without
// a savepoint: it is the last statement before the unit's final commit, and
// if it fails the whole unit rolls back anyway.
func (u *Unit) runLast(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := u.open(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			u.fail(errors.New("store: panic inside a unit of work"))
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		if b := tx.broken(); b != nil {
			err = b
		}
		u.fail(err)
		return err
	}
	return nil
}

// Checkpoint runs last (if not nil) in the unit's transaction and commits it,
// leaving the unit open for further writes in a new transaction. Without an
// open transaction and without last it does nothing. A commit that fails
// poisons the unit.
func (u *Unit) Checkpoint(ctx context.Context, last func(tx *Tx) error) error {
	return u.commit(ctx, last, false)
}

// Commit runs last (if not nil) in the unit's transaction, opening one if
// none is open, commits it and ends the unit. Without last and without an
// open transaction it only ends the unit.
func (u *Unit) Commit(ctx context.Context, last func(tx *Tx) error) error {
	return u.commit(ctx, last, true)
}

func (u *Unit) commit(ctx context.Context, last func(tx *Tx) error, end bool) error {
	if last == nil && !u.Opened() {
		if end {
			u.Rollback()
		}
		return u.Err()
	}
	if last != nil {
		run := u.run
		if end {
			run = u.runLast
		}
		if err := run(ctx, last); err != nil {
			if end {
				u.Rollback()
			}
			return err
		}
	}
	u.mu.Lock()
	if u.broken != nil {
		err := u.broken
		u.mu.Unlock()
		if end {
			u.Rollback()
		}
		return err
	}
	stx, tx := u.stx, u.tx
	var err error
	if lt, ok := stx.(*lateTx); ok {
		// SQLite: park the transaction for a waiting writer, or commit it
		// with every unit parked in it (unitgroup.go). That may wait for
		// the writer: a last commit closes the unit first, so that a
		// goroutine outliving the request does not open another
		// transaction in it meanwhile (Work.joinable refuses a closed unit).
		u.stx, u.tx, u.wrote = nil, nil, false
		if end {
			u.closed = true
		}
		u.mu.Unlock()
		err = lt.commitGrouped(ctx, end)
		u.mu.Lock()
	} else {
		var applied bool
		if applied, err = commitFaulted(stx, u.db.faultOf(ctx)); applied {
			u.db.countCommit(1)
			u.db.committed(ctx)
		}
		u.stx, u.tx, u.wrote = nil, nil, false
	}
	if err != nil {
		u.broken = err
	} else {
		u.phases++
	}
	if end {
		u.closed = true
	}
	u.mu.Unlock()
	if err != nil {
		return err
	}
	for _, f := range tx.after {
		f()
	}
	return nil
}

// Rollback undoes what the open transaction wrote and ends the unit. What
// earlier checkpoints committed stays.
func (u *Unit) Rollback() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.rollbackLocked()
	u.closed = true
}

// ErrCommitUnknown wraps a failed COMMIT: the database may or may not have
// applied the transaction (its connection died while committing).
var ErrCommitUnknown = errors.New("store: commit outcome unknown")

// Work is where an operation's statements run: in a request's unit of work
// when it has one, on their own otherwise. A front that owns a request
// (idempotency.Run) builds the request's Claim around its unit, and a
// capability operation runs its writes, and the reads that must see them,
// through db.Within(cl): nothing joins a unit through the context. With
// NoClaim (a worker, a job, a test) the statements run alone, as DB's do.
//
// A Work is a small value: make one where it is needed and pass it (or the
// claim) down, never keep one past its request.
type Work struct {
	db   *DB
	unit *Unit
}

// Within returns the Work of the request cl belongs to: its unit of work,
// when cl has one on db that is still open, and db alone otherwise.
func (db *DB) Within(cl Claim) Work {
	if cl == nil {
		return Work{db: db}
	}
	return Work{db: db, unit: cl.Unit()}
}

// Work returns the unit's own Work (its owner and the store's tests; a
// capability gets it from its claim, DB.Within).
func (u *Unit) Work() Work { return Work{db: u.db, unit: u} }

// DB is the database the work runs on.
func (w Work) DB() *DB { return w.db }

// Dialect is the database's (a Work is a Querier).
func (w Work) Dialect() Dialect { return w.db.dialect }

// Now is the database clock's time (DB.Now).
func (w Work) Now() time.Time { return w.db.Now() }

// joinable returns the unit the work's statements join, if any. A unit
// that was already committed or rolled back (a goroutine outliving its
// request) is not joined: such writes run in their own transaction.
func (w Work) joinable() *Unit {
	u := w.unit
	if u == nil || u.db != w.db {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil
	}
	return u
}

// InTx runs fn under a savepoint of the unit's one transaction (see Unit),
// or, without a unit, in a transaction of its own (DB.InTx).
func (w Work) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	if u := w.joinable(); u != nil {
		return u.run(ctx, fn)
	}
	return w.db.InTx(ctx, fn)
}

// Exec runs a statement in the unit (opening its transaction: a statement
// is a write), or alone (DB.Exec).
func (w Work) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if u := w.joinable(); u != nil {
		var r sql.Result
		err := u.run(ctx, func(tx *Tx) error {
			var err error
			r, err = tx.Exec(ctx, q, args...)
			return err
		})
		return r, err
	}
	return w.db.Exec(ctx, q, args...)
}

// Query runs a query in the unit's open transaction, so a request reads its
// own writes; without one, outside any transaction (DB.Query).
func (w Work) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if tx := w.openTx(); tx != nil {
		return tx.Query(ctx, q, args...)
	}
	return w.db.Query(ctx, q, args...)
}

// QueryRow runs a single-row query as Query does.
func (w Work) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if tx := w.openTx(); tx != nil {
		return tx.QueryRow(ctx, q, args...)
	}
	return w.db.QueryRow(ctx, q, args...)
}

// openTx is the open transaction of the work's unit, if any.
func (w Work) openTx() *Tx {
	if u := w.joinable(); u != nil {
		return u.openTx()
	}
	return nil
}

// ErrOutsideUnit fails a statement run through the plain DB with a context
// whose request has a unit of work open on it: the statement would commit on
// its own, apart from the request's one commit (and on SQLite wait for the
// writer its own unit holds). It is a mistake in the caller, which must run
// it through the request's Work (DB.Within with the request's claim).
var ErrOutsideUnit = errors.New("store: a statement outside its request's unit of work: run it through the request's store.Work (DB.Within(claim))")

// outsideUnit returns ErrOutsideUnit when a statement on db with ctx would
// run apart from the unit of work ctx's request has open on db: any write
// (write is true) while the unit is not ended, a read while its
// transaction is open (which the read would not see). The plain DB joins
// no unit; without such a unit the statement runs alone.
func (db *DB) outsideUnit(ctx context.Context, write bool) error {
	u, _ := ctx.Value(unitKey{}).(*Unit)
	if u == nil || u.db != db {
		return nil
	}
	u.mu.Lock()
	open := !u.closed && (write || u.tx != nil)
	u.mu.Unlock()
	if open {
		return ErrOutsideUnit
	}
	return nil
}
