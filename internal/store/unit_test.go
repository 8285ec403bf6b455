package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func countMerchants(t *testing.T, db *store.DB, prefix string) int {
	t.Helper()
	// Read outside any transaction (a unit under test may hold the SQLite
	// writer), trying again on a pooled connection that an earlier subtest's
	// backend kill left dead.
	var n int
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = db.QueryRow(context.Background(), "SELECT COUNT(*) FROM merchants WHERE id LIKE ?", prefix+"%").Scan(&n)
		if err == nil || !store.IsConnLost(err) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func insertMerchant(ctx context.Context, tx *store.Tx, id string) error {
	_, err := tx.Exec(ctx, "INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)", id, id, 1)
	return err
}

// TestUnitCommitsOnce: every InTx under a unit joins one transaction that
// commits once; a failing InTx is undone alone (its savepoint); reads through
// the DB see the unit's own writes; a rolled-back unit leaves nothing.
func TestUnitCommitsOnce(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		var commits atomic.Int64
		db.OnCommit(func(context.Context) { commits.Add(1) })
		defer db.OnCommit(nil)
		opened := 0
		ctx, u := db.NewUnit(context.Background(), store.UnitHooks{Open: func(ctx context.Context, tx *store.Tx, first bool) error {
			opened++
			return nil
		}})
		if err := u.Work().InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, "mer_u1") }); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		err := u.Work().InTx(ctx, func(tx *store.Tx) error {
			if err := insertMerchant(ctx, tx, "mer_u2"); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("failing fn: %v", err)
		}
		// A unique violation inside the unit does not break it (PostgreSQL
		// would abort the whole transaction without the savepoint).
		if err := u.Work().InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, "mer_u1") }); !store.IsConflict(err) {
			t.Fatalf("duplicate in unit: %v", err)
		}
		if err := u.Work().InTx(ctx, func(tx *store.Tx) error {
			return u.Work().InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, "mer_u3") })
		}); err != nil {
			t.Fatalf("nested: %v", err)
		}
		var n int
		u.Work().QueryRow(ctx, "SELECT COUNT(*) FROM merchants WHERE id LIKE 'mer_u%'").Scan(&n)
		if n != 2 {
			t.Fatalf("the unit reads %d of its rows, want 2", n)
		}
		if got := countMerchants(t, db, "mer_u"); got != 0 {
			t.Fatalf("%d rows visible before the commit", got)
		}
		if commits.Load() != 0 {
			t.Fatalf("%d commits before Commit", commits.Load())
		}
		if err := u.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if commits.Load() != 1 || opened != 1 || countMerchants(t, db, "mer_u") != 2 {
			t.Fatalf("commits %d, opened %d, rows %d", commits.Load(), opened, countMerchants(t, db, "mer_u"))
		}
		// After the unit ended, InTx with its context runs on its own.
		if err := u.Work().InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, "mer_u4") }); err != nil || countMerchants(t, db, "mer_u") != 3 {
			t.Fatalf("after the unit: %v", err)
		}

		ctx2, u2 := db.NewUnit(context.Background(), store.UnitHooks{})
		if err := u2.Work().InTx(ctx2, func(tx *store.Tx) error { return insertMerchant(ctx2, tx, "mer_r1") }); err != nil {
			t.Fatal(err)
		}
		if err := u2.Checkpoint(ctx2, nil); err != nil || countMerchants(t, db, "mer_r") != 1 {
			t.Fatalf("checkpoint: %v", err)
		}
		if err := u2.Work().InTx(ctx2, func(tx *store.Tx) error { return insertMerchant(ctx2, tx, "mer_r2") }); err != nil {
			t.Fatal(err)
		}
		u2.Rollback()
		if got := countMerchants(t, db, "mer_r"); got != 1 || u2.Phases() != 1 {
			t.Fatalf("after rollback: %d rows, %d phases; want the checkpoint's 1", got, u2.Phases())
		}
	})
}

// TestUnitFirstWriteNeedsNoSavepoint: a unit's InTx in a transaction that
// has written nothing runs without a savepoint; if it fails, the whole
// transaction is rolled back (PostgreSQL's, aborted by a unique violation,
// included), the unit stays usable, and its next write opens a transaction
// that the Open hook sees as the first again. One commit in all.
func TestUnitFirstWriteNeedsNoSavepoint(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		if err := db.InTx(context.Background(), func(tx *store.Tx) error { return insertMerchant(context.Background(), tx, "mer_b0") }); err != nil {
			t.Fatal(err)
		}
		var commits atomic.Int64
		db.OnCommit(func(context.Context) { commits.Add(1) })
		defer db.OnCommit(nil)
		var firsts []bool
		ctx, u := db.NewUnit(context.Background(), store.UnitHooks{Open: func(ctx context.Context, tx *store.Tx, first bool) error {
			firsts = append(firsts, first)
			return nil
		}})
		// A unique violation on the transaction's first write.
		if err := u.Work().InTx(ctx, func(tx *store.Tx) error {
			if err := insertMerchant(ctx, tx, "mer_b1"); err != nil {
				return err
			}
			return insertMerchant(ctx, tx, "mer_b0")
		}); !store.IsConflict(err) {
			t.Fatalf("duplicate: %v", err)
		}
		if u.Opened() || u.Err() != nil {
			t.Fatalf("after the failed first write: opened %v, err %v; want a closed transaction and a usable unit", u.Opened(), u.Err())
		}
		if err := u.Work().InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, "mer_b2") }); err != nil {
			t.Fatal(err)
		}
		if err := u.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if got := countMerchants(t, db, "mer_b"); got != 2 {
			t.Fatalf("%d rows, want mer_b0 and mer_b2", got)
		}
		if commits.Load() != 1 || len(firsts) != 2 || !firsts[0] || !firsts[1] {
			t.Fatalf("commits %d, Open hook's first %v; want 1 and [true true]", commits.Load(), firsts)
		}
	})
}

// terminate ends PostgreSQL backends from a connection outside db's pool,
// as an operator's pg_terminate_backend or a restart would.
func terminate(t *testing.T, admin *store.DB, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if _, err := admin.Exec(context.Background(), "SELECT pg_terminate_backend(?)", pid); err != nil {
			t.Fatal(err)
		}
	}
}

// openWithAdmin opens url twice: db, the pool under test, and admin, a pool
// outside it to terminate db's backends from; both close when t ends.
func openWithAdmin(t *testing.T, url string) (db, admin *store.DB) {
	t.Helper()
	for _, p := range []**store.DB{&db, &admin} {
		d, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		*p = d
	}
	return db, admin
}

// killIdle holds n connections of db's pool, notes their backends, returns
// them to the pool idle and terminates them all from admin; it returns the
// backends' pids. A connection that fails while held fails t: the pool
// handed out a dead one.
func killIdle(t *testing.T, db, admin *store.DB, n int) []int {
	t.Helper()
	ctx := context.Background()
	var pids []int
	var conns []interface{ Close() error }
	for i := 0; i < n; i++ {
		c, err := db.SQL().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		if err := c.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatalf("connection %d of %d, handed out by the pool, is dead: %v", i, n, err)
		}
		pids, conns = append(pids, pid), append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	terminate(t, admin, pids...)
	return pids
}

// TestKilledIdleConnectionsNeverHandedOut: connections the server ended
// while they sat idle in the pool (a restart, pg_terminate_backend) are
// found before a caller gets one, so even a plain query, which no retry layer
// covers, succeeds at once, however recently each connection was used.
func TestKilledIdleConnectionsNeverHandedOut(t *testing.T) {
	db, admin := openWithAdmin(t, storetest.URL(t, storetest.Postgres))
	ctx := context.Background()
	const n = 8
	for round := 0; round < 3; round++ {
		pids := killIdle(t, db, admin, n)
		// Wait until the server has ended them all, well within the
		// second after which the driver would ping anyway.
		for deadline := time.Now().Add(500 * time.Millisecond); ; {
			var left int
			if err := admin.QueryRow(ctx, "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ANY(?)", pids).Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d backends still there", left)
			}
			time.Sleep(5 * time.Millisecond)
		}
		for i := 0; i < n; i++ {
			var one int
			if err := db.SQL().QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
				t.Fatalf("round %d, query %d on a pool whose idle connections were killed: %v", round, i, err)
			}
		}
	}
}

// TestDeadConnectionIsRetried: a pooled connection the server closed is
// retried transparently, whether it died idle in the pool (fresh) or in the
// middle of a transaction (mid-load), and the transaction applies once.
func TestDeadConnectionIsRetried(t *testing.T) {
	db, admin := openWithAdmin(t, storetest.URL(t, storetest.Postgres))
	ctx := context.Background()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("fresh", func(t *testing.T) {
		// Hold every connection the pool will hand out, note their
		// backends, return them idle, and kill them all.
		killIdle(t, db, admin, 4)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, "mer_f1") }); err != nil {
			t.Fatalf("InTx on a killed pool: %v", err)
		}
		if countMerchants(t, db, "mer_f") != 1 {
			t.Fatal("the row is missing")
		}
	})

	t.Run("mid-load", func(t *testing.T) {
		attempts := 0
		err := db.InTx(ctx, func(tx *store.Tx) error {
			attempts++
			if err := insertMerchant(ctx, tx, "mer_m1"); err != nil {
				return err
			}
			if attempts == 1 {
				var pid int
				if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
					return err
				}
				terminate(t, admin, pid)
			}
			return insertMerchant(ctx, tx, "mer_m2")
		})
		if err != nil {
			t.Fatalf("InTx whose backend died mid-transaction: %v", err)
		}
		if attempts != 2 || countMerchants(t, db, "mer_m") != 2 {
			t.Fatalf("attempts %d, rows %d", attempts, countMerchants(t, db, "mer_m"))
		}
	})

	t.Run("unit", func(t *testing.T) {
		uctx, u := db.NewUnit(ctx, store.UnitHooks{})
		err := u.Work().InTx(uctx, func(tx *store.Tx) error {
			var pid int
			if err := tx.QueryRow(uctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
				return err
			}
			terminate(t, admin, pid)
			return insertMerchant(uctx, tx, "mer_x1")
		})
		if err == nil || !u.Retryable() {
			t.Fatalf("a unit whose backend died: err %v, retryable %v", err, u.Retryable())
		}
		u.Rollback()
		if countMerchants(t, db, "mer_x") != 0 {
			t.Fatal("a dead unit left a row")
		}
	})
}
