package store

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func openSQLite(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(ctx, "CREATE TABLE ug (who TEXT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	return db
}

func ugRows(t *testing.T, db *DB) map[string]bool {
	t.Helper()
	rows, err := db.sql.Query("SELECT who FROM ug")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	if err := AddIDs(rows, got); err != nil {
		t.Fatal(err)
	}
	return got
}

// workOf is the Work of the unit ctx was marked with (NewUnit), or db
// alone: the tests below hand a unit to helpers by its context.
func workOf(ctx context.Context, db *DB) Work {
	u, _ := ctx.Value(unitKey{}).(*Unit)
	return Work{db: db, unit: u}
}

func ugInsert(ctx context.Context, db *DB, who string) error {
	return workOf(ctx, db).InTx(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO ug (who) VALUES (?)", who)
		return err
	})
}

// waitWaiters waits until n writers wait for SQLite's writer.
func waitWaiters(t *testing.T, db *DB, n int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for db.writeWaiters.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writers waiting, want %d", db.writeWaiters.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// parkForB writes row "a" in unit a, starts unit b whose first writes
// (bWork) wait for the writer, and commits a meanwhile, so a parks its
// transaction for b. It returns b's unit and the outcomes of a's commit and
// of b's writes.
func parkForB(t *testing.T, db *DB, bWork func(ctx context.Context) error) (bctx context.Context, b *Unit, aDone, bWrote chan error) {
	t.Helper()
	bctx, b = db.NewUnit(context.Background(), UnitHooks{})
	aDone, bWrote = parkFor(t, db, bctx, bWork)
	return bctx, b, aDone, bWrote
}

// parkFor is parkForB for the unit bctx carries.
func parkFor(t *testing.T, db *DB, bctx context.Context, bWork func(ctx context.Context) error) (aDone, bWrote chan error) {
	t.Helper()
	actx, a := db.NewUnit(context.Background(), UnitHooks{})
	if err := ugInsert(actx, db, "a"); err != nil {
		t.Fatal(err)
	}
	bWrote = make(chan error, 1)
	go func() { bWrote <- bWork(bctx) }()
	waitWaiters(t, db, 1)
	aDone = make(chan error, 1)
	go func() { aDone <- a.Commit(actx, nil) }()
	return aDone, bWrote
}

// TestUnitsShareACommit: a unit that commits while another waits for the
// writer parks its transaction; the next unit goes on in it and commits both
// at once. The first unit's Commit returns only after that commit, and each
// unit's commit is reported under its own context.
func TestUnitsShareACommit(t *testing.T) {
	db := openSQLite(t)
	var commits atomic.Int32
	db.OnCommit(func(context.Context) { commits.Add(1) })
	bctx, b, aDone, bWrote := parkForB(t, db, func(ctx context.Context) error { return ugInsert(ctx, db, "b") })
	if err := <-bWrote; err != nil {
		t.Fatal(err)
	}
	if b.sharedTx() == nil {
		t.Fatal("b did not go on in a's parked transaction")
	}
	select {
	case err := <-aDone:
		t.Fatalf("a's commit returned (%v) before the shared transaction committed", err)
	case <-time.After(50 * time.Millisecond):
	}
	if got := ugRows(t, db); len(got) != 0 {
		t.Fatalf("rows visible before the commit: %v", got)
	}
	if err := b.Commit(bctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	if got := ugRows(t, db); !got["a"] || !got["b"] {
		t.Fatalf("rows after the shared commit: %v", got)
	}
	if n := commits.Load(); n != 2 || b.Phases() != 1 {
		t.Fatalf("commits reported %d, b's phases %d", n, b.Phases())
	}
	// The database committed once, for two units (the table's creation
	// before them was a statement of its own).
	if c, u := db.CommitCounts(); c != 2 || u != 3 {
		t.Fatalf("CommitCounts = %d commits, %d units; want 2, 3", c, u)
	}
}

// TestUnitRollbackInASharedTransaction: a unit that goes on in another's
// parked transaction takes no savepoint (it would copy every page it
// changes); when it rolls back, the whole shared transaction rolls back and
// the parked unit learns that nothing of its work committed, as a transient
// failure its request runs again for. A failing InTx inside the unit is
// still undone alone (its own savepoint).
func TestUnitRollbackInASharedTransaction(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	_, b, aDone, bWrote := parkForB(t, db, func(bctx context.Context) error {
		if err := ugInsert(bctx, db, "b"); err != nil {
			return err
		}
		err := workOf(bctx, db).InTx(bctx, func(tx *Tx) error {
			if _, err := tx.Exec(bctx, "INSERT INTO ug (who) VALUES ('b2')"); err != nil {
				return err
			}
			return errors.New("boom")
		})
		if err.Error() == "boom" {
			err = nil
		}
		return err
	})
	if err := <-bWrote; err != nil {
		t.Fatal(err)
	}
	if b.sharedTx() == nil {
		t.Fatal("b did not go on in a's parked transaction")
	}
	var inB int
	if err := b.tx.QueryRow(ctx, "SELECT COUNT(*) FROM ug WHERE who IN ('a', 'b', 'b2')").Scan(&inB); err != nil || inB != 2 {
		t.Fatalf("inside b: %d rows of a, b, b2 (%v); want a and b, b2 undone alone", inB, err)
	}
	b.Rollback()
	err := <-aDone
	if !errors.Is(err, errGroupAborted) || !isTransient(err) {
		t.Fatalf("a's commit: %v, want the group's abort", err)
	}
	if got := ugRows(t, db); len(got) != 0 {
		t.Fatalf("rows: %v", got)
	}
	// The writer is free and clean.
	if err := ugInsert(ctx, db, "c"); err != nil {
		t.Fatal(err)
	}
	if db.parked != nil {
		t.Fatal("a transaction is still parked")
	}
}

// TestCarefulUnitRollsBackAlone: a unit that already committed a recovery
// point (its request cannot simply run again) goes on in a parked
// transaction under a savepoint, so its rollback undoes its own work alone
// and the parked unit's work commits; and it never parks its own
// transaction, so no other unit's rollback can undo it.
func TestCarefulUnitRollsBackAlone(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	bctx, b := db.NewUnit(ctx, UnitHooks{})
	if err := b.Checkpoint(bctx, func(tx *Tx) error {
		_, err := tx.Exec(bctx, "INSERT INTO ug (who) VALUES ('b0')")
		return err
	}); err != nil || b.Phases() != 1 {
		t.Fatalf("checkpoint: %v, phases %d", err, b.Phases())
	}
	aDone, bWrote := parkFor(t, db, bctx, func(ctx context.Context) error { return ugInsert(ctx, db, "b1") })
	if err := <-bWrote; err != nil {
		t.Fatal(err)
	}
	if b.sharedTx() == nil {
		t.Fatal("b did not go on in a's parked transaction")
	}
	b.Rollback()
	if err := <-aDone; err != nil {
		t.Fatalf("a's commit: %v", err)
	}
	if got := ugRows(t, db); !got["a"] || !got["b0"] || got["b1"] || len(got) != 2 {
		t.Fatalf("rows: %v", got)
	}

	// A careful unit commits at once even while another writer waits.
	cctx, c := db.NewUnit(ctx, UnitHooks{})
	if err := c.Checkpoint(cctx, func(tx *Tx) error {
		_, err := tx.Exec(cctx, "INSERT INTO ug (who) VALUES ('c0')")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := ugInsert(cctx, db, "c1"); err != nil {
		t.Fatal(err)
	}
	dctx, d := db.NewUnit(ctx, UnitHooks{})
	dWrote := make(chan error, 1)
	go func() { dWrote <- ugInsert(dctx, db, "d") }()
	waitWaiters(t, db, 1)
	cDone := make(chan error, 1)
	go func() { cDone <- c.Commit(cctx, nil) }()
	if err := <-dWrote; err != nil {
		t.Fatal(err)
	}
	joined := d.sharedTx() != nil
	d.Rollback()
	if err := <-cDone; err != nil {
		t.Fatal(err)
	}
	if joined {
		t.Fatal("d went on in a transaction the careful unit parked")
	}
	if got := ugRows(t, db); !got["c0"] || !got["c1"] || got["d"] {
		t.Fatalf("rows: %v", got)
	}
}

// TestParkedTransactionOutlivesAWaiterThatGaveUp: the writer a unit parked
// for gives up; the goroutine it leaves commits the parked transaction.
func TestParkedTransactionOutlivesAWaiterThatGaveUp(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	if err := db.lockWrite(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- db.lockWrite(wctx) }()
	waitWaiters(t, db, 1)

	// As a unit that commits while one waits: park.
	stx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stx.Exec("INSERT INTO ug (who) VALUES ('parked')"); err != nil {
		t.Fatal(err)
	}
	me := parkedMember{ctx: ctx, done: make(chan error, 1)}
	db.parked = &parkedTx{stx: stx, members: []parkedMember{me}}
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiter: %v", err)
	}
	db.unlockWrite()
	select {
	case err := <-me.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the parked transaction was never committed")
	}
	if got := ugRows(t, db); !got["parked"] {
		t.Fatalf("rows: %v", got)
	}
}

// TestOtherWritersCommitAParkedTransactionFirst: a grouped InTx (or any
// writer that is not a unit) finds a parked transaction and commits it
// before its own.
func TestOtherWritersCommitAParkedTransactionFirst(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	actx, a := db.NewUnit(ctx, UnitHooks{})
	if err := ugInsert(actx, db, "a"); err != nil {
		t.Fatal(err)
	}
	other := make(chan error, 1)
	go func() { other <- ugInsert(ctx, db, "plain") }()
	waitWaiters(t, db, 1)
	if err := a.Commit(actx, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	if got := ugRows(t, db); !got["a"] || !got["plain"] {
		t.Fatalf("rows: %v", got)
	}
}

// TestWaitersThatGiveUpLeaveOneGoroutine: many writers giving up while the
// writer is held leave one goroutine between them to settle what is parked,
// not one each (a client can hang up as often as it likes).
func TestWaitersThatGiveUpLeaveOneGoroutine(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	if err := db.lockWrite(ctx); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	wctx, cancel := context.WithCancel(ctx)
	const n = 50
	gaveUp := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() { gaveUp <- db.lockWrite(wctx) }()
	}
	waitWaiters(t, db, n)
	cancel()
	for i := 0; i < n; i++ {
		if err := <-gaveUp; !errors.Is(err, context.Canceled) {
			t.Fatalf("waiter: %v", err)
		}
	}
	time.Sleep(20 * time.Millisecond) // the waiters' goroutines end
	if extra := runtime.NumGoroutine() - before; extra > 1 {
		t.Fatalf("%d goroutines left by %d waiters that gave up, want at most 1", extra, n)
	}
	db.unlockWrite()
	deadline := time.Now().Add(5 * time.Second)
	for db.settling.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the settling goroutine never took the writer")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCancelledUnitLeavesParkedWorkAlone: a unit going on in another unit's
// parked transaction whose request is cancelled in the middle of a long
// statement must not roll back the parked unit's finished work (SQLite
// undoes the whole transaction when a statement is interrupted).
func TestCancelledUnitLeavesParkedWorkAlone(t *testing.T) {
	db := openSQLite(t)
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var bctx context.Context
	bctx, b, aDone, bWrote := parkForB(t, db, func(ctx context.Context) error {
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		return workOf(ctx, db).InTx(ctx, func(tx *Tx) error {
			// A statement that runs far longer than 20 ms.
			_, err := tx.Exec(cctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
				INSERT INTO ug (who) SELECT 'b' || i FROM n`)
			return err
		})
	})
	<-bWrote // b's work may finish or fail; either way a's row must commit
	if b.sharedTx() == nil {
		t.Fatal("b did not go on in a's parked transaction")
	}
	b.Commit(bctx, nil)
	if err := <-aDone; err != nil {
		t.Fatalf("a's commit: %v", err)
	}
	if got := ugRows(t, db); !got["a"] {
		t.Fatal("a's committed row is gone: b's cancelled statement rolled back the shared transaction")
	}
}

// sharedTx is the parked transaction u's open SQLite transaction goes on in,
// or nil.
func (u *Unit) sharedTx() *parkedTx {
	u.mu.Lock()
	lt, _ := u.stx.(*lateTx)
	u.mu.Unlock()
	if lt == nil {
		return nil
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.shared
}

// TestAdvisoryLockTakesTheWriter (SQLite): a unit's transaction takes the
// writer late, so its advisory lock takes it: a second unit's lock waits for
// the first unit's commit, and then reads what the first wrote.
func TestAdvisoryLockTakesTheWriter(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	actx, a := db.NewUnit(ctx, UnitHooks{})
	if err := a.Work().InTx(actx, func(tx *Tx) error {
		if err := tx.AdvisoryLock(actx, "k"); err != nil {
			return err
		}
		return tx.ExecLater(actx, "INSERT INTO ug (who) VALUES ('a')")
	}); err != nil {
		t.Fatal(err)
	}
	bctx, b := db.NewUnit(ctx, UnitHooks{})
	saw := make(chan int, 1)
	go func() {
		err := b.Work().InTx(bctx, func(tx *Tx) error {
			if err := tx.AdvisoryLock(bctx, "k"); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(bctx, "SELECT COUNT(*) FROM ug WHERE who = 'a'").Scan(&n); err != nil {
				return err
			}
			saw <- n
			return nil
		})
		if err != nil {
			t.Error(err)
			saw <- -1
		}
	}()
	select {
	case n := <-saw:
		t.Fatalf("the second lock was taken while the first unit held it (it saw %d rows)", n)
	case <-time.After(100 * time.Millisecond):
	}
	// A's commit parks its transaction for B, waiting for the writer, and
	// B goes on in it: B sees A's row, and A's commit is B's.
	aDone := make(chan error, 1)
	go func() { aDone <- a.Commit(actx, nil) }()
	select {
	case n := <-saw:
		if n != 1 {
			t.Fatalf("after the first unit's commit the second saw %d of its rows, want 1", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second lock was never taken")
	}
	if err := b.Commit(bctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	if got := ugRows(t, db); !got["a"] {
		t.Fatal("the first unit's row was not committed")
	}
}

// TestEntryFindingItsRowTakenUndoesNothing: a unit whose entry (Tx.Enter)
// finds its row already there, when it takes the writer in another unit's
// parked transaction, ran nothing (not what it queued either), so its
// rollback leaves the shared transaction to the others: the parked unit
// commits, and is not told to run again. An entry that inserts its row runs
// before what waits, and reports it.
func TestEntryFindingItsRowTakenUndoesNothing(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	if _, err := db.Exec(ctx, "INSERT INTO ug (who) VALUES ('taken')"); err != nil {
		t.Fatal(err)
	}
	errTaken := errors.New("taken")
	enterThenTake := func(who string, entered *bool) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			return workOf(ctx, db).InTx(ctx, func(tx *Tx) error {
				if err := tx.ExecLater(ctx, "INSERT INTO ug (who) VALUES (?)", who+"-queued"); err != nil {
					return err
				}
				w, ok := tx.Writer()
				if !ok {
					return errors.New("a unit's SQLite transaction has no late writer")
				}
				if !w.Enter("INSERT INTO ug (who) VALUES (?) ON CONFLICT (who) DO NOTHING", []any{who}, errTaken, func() { *entered = true }) {
					return errors.New("Enter refused a transaction that has not taken the writer")
				}
				if err := w.TakeWriter(ctx); err != nil {
					return err
				}
				// The entry ran first: the queued row sees it.
				var n int
				if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM ug WHERE who IN (?, ?)", who, who+"-queued").Scan(&n); err != nil {
					return err
				}
				if n != 2 {
					return errors.New("the entry and the queued statement did not both run")
				}
				if w.Enter("INSERT INTO ug (who) VALUES ('late')", nil, errTaken, nil) {
					return errors.New("Enter accepted a transaction that holds the writer")
				}
				return nil
			})
		}
	}

	var bEntered bool
	_, b, aDone, bWrote := parkForB(t, db, enterThenTake("taken", &bEntered))
	if err := <-bWrote; !errors.Is(err, errTaken) {
		t.Fatalf("b's writes: %v, want the entry's error", err)
	}
	if bEntered {
		t.Fatal("the entry reported a row it did not insert")
	}
	if b.Err() == nil {
		t.Fatal("b's unit is not failed")
	}
	b.Rollback()
	if err := <-aDone; err != nil {
		t.Fatalf("a's commit: %v, want it committed", err)
	}
	if got := ugRows(t, db); !got["a"] || !got["taken"] || len(got) != 2 {
		t.Fatalf("rows: %v", got)
	}

	var cEntered bool
	cctx, c := db.NewUnit(ctx, UnitHooks{})
	if err := enterThenTake("c", &cEntered)(cctx); err != nil {
		t.Fatal(err)
	}
	if !cEntered {
		t.Fatal("the entry that inserted its row did not report it")
	}
	if err := c.Commit(cctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := ugRows(t, db); !got["c"] || !got["c-queued"] || len(got) != 4 {
		t.Fatalf("rows: %v", got)
	}
}
