package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func insertLater(ctx context.Context, tx *store.Tx, id string) error {
	return tx.ExecLater(ctx, "INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)", id, id, 1)
}

// TestExecLaterKeepsOrder: statements run later are applied in order before
// anything that needs an answer, so the transaction reads its own writes,
// and they commit with it.
func TestExecLaterKeepsOrder(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := insertLater(ctx, tx, "mer_o1"); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM merchants WHERE id LIKE 'mer_o%'").Scan(&n); err != nil || n != 1 {
				t.Errorf("count after a later insert: %d, %v", n, err)
			}
			if err := insertLater(ctx, tx, "mer_o2"); err != nil {
				return err
			}
			res, err := tx.Exec(ctx, "UPDATE merchants SET name = 'renamed' WHERE id = ?", "mer_o2")
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k != 1 {
				t.Errorf("update of a row inserted later touched %d rows", k)
			}
			return tx.ExecLater(ctx, "UPDATE merchants SET name = 'last' WHERE id = ?", "mer_o1")
		})
		if err != nil {
			t.Fatal(err)
		}
		var a, b string
		if err := db.QueryRow(ctx, "SELECT name FROM merchants WHERE id = 'mer_o1'").Scan(&a); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(ctx, "SELECT name FROM merchants WHERE id = 'mer_o2'").Scan(&b); err != nil {
			t.Fatal(err)
		}
		if a != "last" || b != "renamed" {
			t.Fatalf("names %q, %q", a, b)
		}
	})
}

// TestExecLaterFailureBreaksTheTransaction: a statement run later that
// fails surfaces at the next statement or at the commit, and nothing of the
// transaction commits; the commit's failure is not "outcome unknown".
func TestExecLaterFailureBreaksTheTransaction(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Exec(ctx, "INSERT INTO merchants (id, name, created_at) VALUES ('mer_dup', 'd', 1)"); err != nil {
			t.Fatal(err)
		}
		pg := db.Dialect() == store.Postgres

		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := insertMerchant(ctx, tx, "mer_p1"); err != nil {
				return err
			}
			if err := insertLater(ctx, tx, "mer_dup"); err != nil {
				if pg {
					t.Errorf("PostgreSQL ran the later statement at once: %v", err)
				}
				return err
			}
			if !pg {
				t.Error("SQLite deferred a statement")
			}
			err := insertMerchant(ctx, tx, "mer_p2")
			if !errors.Is(err, store.ErrLaterFailed) || !store.IsConflict(err) {
				t.Errorf("next statement after a failed later one: %v", err)
			}
			return err
		})
		if !store.IsConflict(err) || errors.Is(err, store.ErrCommitUnknown) {
			t.Fatalf("InTx: %v", err)
		}

		// Failing with the COMMIT that carries it.
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if err := insertMerchant(ctx, tx, "mer_p3"); err != nil {
				return err
			}
			return insertLater(ctx, tx, "mer_dup")
		})
		if !store.IsConflict(err) || errors.Is(err, store.ErrCommitUnknown) {
			t.Fatalf("InTx failing at its commit: %v", err)
		}
		if n := countMerchants(t, db, "mer_p"); n != 0 {
			t.Fatalf("%d rows of failed transactions committed", n)
		}
	})
}

// TestExecLaterInAUnit: a joined InTx that fails is undone alone even when
// its savepoint and statements were still waiting to be sent; a later
// statement that fails breaks the whole unit, whichever InTx meets it.
func TestExecLaterInAUnit(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		boom := errors.New("boom")

		uctx, u := db.NewUnit(ctx, store.UnitHooks{})
		if err := u.Work().InTx(uctx, func(tx *store.Tx) error { return insertLater(uctx, tx, "mer_u1") }); err != nil {
			t.Fatal(err)
		}
		if err := u.Work().InTx(uctx, func(tx *store.Tx) error {
			if err := insertLater(uctx, tx, "mer_u2"); err != nil {
				return err
			}
			return boom
		}); err != boom {
			t.Fatalf("failing InTx: %v", err)
		}
		if err := u.Work().InTx(uctx, func(tx *store.Tx) error { return insertLater(uctx, tx, "mer_u3") }); err != nil {
			t.Fatal(err)
		}
		if err := u.Commit(uctx, nil); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]int{"mer_u1": 1, "mer_u2": 0, "mer_u3": 1} {
			if n := countMerchants(t, db, id); n != want {
				t.Errorf("%s: %d rows, want %d", id, n, want)
			}
		}

		if _, err := db.Exec(ctx, "INSERT INTO merchants (id, name, created_at) VALUES ('mer_v0', 'd', 1)"); err != nil {
			t.Fatal(err)
		}
		uctx, u = db.NewUnit(ctx, store.UnitHooks{})
		if err := u.Work().InTx(uctx, func(tx *store.Tx) error { return insertLater(uctx, tx, "mer_v1") }); err != nil {
			t.Fatal(err)
		}
		// Both engines run it later (PostgreSQL with the next batch, SQLite
		// once the unit takes the writer): the failure breaks the unit.
		err := u.Work().InTx(uctx, func(tx *store.Tx) error { return insertLater(uctx, tx, "mer_v0") })
		if err != nil {
			t.Fatalf("a later statement failed at once: %v", err)
		}
		err = u.Work().InTx(uctx, func(tx *store.Tx) error { return insertMerchant(uctx, tx, "mer_v2") })
		if !errors.Is(err, store.ErrLaterFailed) {
			t.Fatalf("InTx after a failed later statement: %v", err)
		}
		if cerr := u.Commit(uctx, nil); cerr == nil {
			t.Fatal("a broken unit committed")
		}
		if n := countMerchants(t, db, "mer_v"); n != 1 {
			t.Fatalf("%d rows, want only mer_v0", n)
		}
	})
}

// TestExecLaterExpect: a compare-and-set run later fails the InTx that ran
// it when its row count is not the one expected, however its failure shows
// (at the next statement that needs an answer, at a query that cannot say,
// or when fn ends), and what that InTx wrote meanwhile rolls back with it; a
// unit's other InTx stand. Met, it changes nothing of the transaction.
func TestExecLaterExpect(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		lost := errors.New("lost the race")
		if err := db.InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, "mer_x0") }); err != nil {
			t.Fatal(err)
		}
		rename := func(tx *store.Tx, from, to string) error {
			return tx.ExecLaterExpect(ctx, 1, lost, "UPDATE merchants SET name = ? WHERE id = 'mer_x0' AND name = ?", to, from)
		}
		name := func() string {
			t.Helper()
			var n string
			if err := db.QueryRow(ctx, "SELECT name FROM merchants WHERE id = 'mer_x0'").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}

		// Met: the change and what follows commit.
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := rename(tx, "mer_x0", "first"); err != nil {
				return err
			}
			_, err := tx.ExecAll(ctx, []store.Stmt{{Query: "INSERT INTO merchants (id, name, created_at) VALUES ('mer_x1', 'x', 1)"}})
			return err
		}); err != nil {
			t.Fatalf("a met expectation failed: %v", err)
		}
		if n := name(); n != "first" || countMerchants(t, db, "mer_x1") != 1 {
			t.Fatalf("after a met expectation: name %q, %d rows", n, countMerchants(t, db, "mer_x1"))
		}

		// Unmet, in the ways it can show; fn's later writes roll back.
		for _, c := range []struct {
			name string
			then func(tx *store.Tx) error
		}{
			{"at the next statement", func(tx *store.Tx) error {
				_, err := tx.ExecAll(ctx, []store.Stmt{{Query: "INSERT INTO merchants (id, name, created_at) VALUES ('mer_x2', 'x', 1)"}})
				if !errors.Is(err, lost) && db.Dialect() == store.Postgres {
					t.Errorf("the statement that carried the compare-and-set answered %v, want %v", err, lost)
				}
				return err
			}},
			{"when fn ends", func(tx *store.Tx) error {
				return insertLater(ctx, tx, "mer_x2")
			}},
			{"after a query", func(tx *store.Tx) error {
				var n int
				tx.QueryRow(ctx, "SELECT COUNT(*) FROM merchants").Scan(&n)
				return insertMerchant(ctx, tx, "mer_x2")
			}},
			{"when fn dresses the error up", func(tx *store.Tx) error {
				if _, err := tx.ExecAll(ctx, []store.Stmt{{Query: "SELECT 1"}}); err != nil {
					return errors.New("something else went wrong")
				}
				return nil
			}},
		} {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if err := rename(tx, "nobody", "second"); err != nil {
					return err
				}
				return c.then(tx)
			})
			if !errors.Is(err, lost) {
				t.Errorf("%s: InTx returned %v, want %v", c.name, err, lost)
			}
			if n := name(); n != "first" || countMerchants(t, db, "mer_x2") != 0 {
				t.Errorf("%s: after an unmet expectation: name %q, %d rows of what followed", c.name, n, countMerchants(t, db, "mer_x2"))
			}
		}

		// In a unit: the InTx that met it is undone alone.
		uctx, u := db.NewUnit(ctx, store.UnitHooks{})
		if err := u.Work().InTx(uctx, func(tx *store.Tx) error { return insertMerchant(uctx, tx, "mer_x3") }); err != nil {
			t.Fatal(err)
		}
		err := u.Work().InTx(uctx, func(tx *store.Tx) error {
			if err := rename(tx, "nobody", "second"); err != nil {
				return err
			}
			return insertLater(uctx, tx, "mer_x4")
		})
		if !errors.Is(err, lost) {
			t.Fatalf("in a unit: InTx returned %v, want %v", err, lost)
		}
		// An outer fn's expectation is settled before a nested InTx, so
		// rolling back to the nested savepoint cannot hide it.
		err = u.Work().InTx(uctx, func(tx *store.Tx) error {
			if err := rename(tx, "nobody", "third"); err != nil {
				return err
			}
			// Even when fn makes nothing of the nested InTx's failure.
			u.Work().InTx(uctx, func(tx *store.Tx) error { return insertMerchant(uctx, tx, "mer_x5") })
			return nil
		})
		if !errors.Is(err, lost) {
			t.Fatalf("nested: InTx returned %v, want %v", err, lost)
		}
		if err := u.Work().InTx(uctx, func(tx *store.Tx) error {
			if err := rename(tx, "first", "fourth"); err != nil {
				return err
			}
			return insertMerchant(uctx, tx, "mer_x6")
		}); err != nil {
			t.Fatalf("in a unit, after a rolled-back expectation: %v", err)
		}
		if err := u.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for prefix, want := range map[string]int{"mer_x3": 1, "mer_x4": 0, "mer_x5": 0, "mer_x6": 1} {
			if n := countMerchants(t, db, prefix); n != want {
				t.Errorf("after the unit: %d rows %s, want %d", n, prefix, want)
			}
		}
		if n := name(); n != "fourth" {
			t.Errorf("after the unit: name %q, want fourth", n)
		}
	})
}
