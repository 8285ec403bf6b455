package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestNestedInTxFailingBeforeTheFirstWrite: a nested InTx that fails while
// its transaction has written nothing yet is undone alone, under a
// savepoint, as any nested InTx: the outer fn goes on in the same
// transaction and tries another step.
func TestNestedInTxFailingBeforeTheFirstWrite(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx, u := db.NewUnit(context.Background(), store.UnitHooks{})
		defer u.Rollback()
		err := u.Work().InTx(ctx, func(tx *store.Tx) error {
			if err := u.Work().InTx(ctx, func(tx *store.Tx) error { return errors.New("step refused") }); err == nil {
				t.Error("the failing step succeeded")
			}
			return insertMerchant(ctx, tx, "mer_n1") // another step
		})
		if err != nil {
			t.Fatalf("the outer fn could not go on after a failed nested InTx: %v", err)
		}
		if err := u.Commit(ctx, nil); err != nil || countMerchants(t, db, "mer_n1") != 1 {
			t.Fatalf("commit: %v, rows %d", err, countMerchants(t, db, "mer_n1"))
		}
	})
}

// TestNestedFailureKeepsTheKeyAfterARecoveryPoint: a failed nested InTx
// before the first write, then a write, a recovery point (the key's row is
// written with it) and another write: the request's later transactions
// renew its own key instead of claiming it again and refusing themselves.
func TestNestedFailureKeepsTheKeyAfterARecoveryPoint(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		req := idempotency.Request{Scope: idempotency.Scope{MerchantID: "mer_x", PrincipalID: "key_x"}, Key: "k", Method: "POST", Path: "/v1/x", Hash: "h"}
		ctx, claim := idempotency.Start(context.Background(), db, req, idempotency.Found{})
		defer claim.Abort(context.Background())
		work := db.Within(claim)
		_ = work.InTx(ctx, func(tx *store.Tx) error {
			return work.InTx(ctx, func(*store.Tx) error { return errors.New("invalid") })
		})
		if err := work.InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, "mer_k1") }); err != nil {
			t.Fatal(err)
		}
		if err := claim.RecoveryPoint(ctx, "test.point", "mer_k1"); err != nil {
			t.Fatal(err)
		}
		if err := work.InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, "mer_k2") }); err != nil {
			t.Fatalf("a write after the recovery point: %v (refused: %v)", err, claim.Refused())
		}
	})
}

// TestNestedFailureInAParkedTransaction (SQLite): a unit going on in
// another unit's parked transaction, whose nested InTx fails before it
// wrote anything and whose outer fn then writes and fails: nothing of it
// commits. Its rollback rolls the shared transaction back (it went on in it
// without a savepoint): the parked unit learns that its work did not commit,
// as a transient failure (its request runs again), and the unit waiting
// for the writer meanwhile begins afresh and commits.
func TestNestedFailureInAParkedTransaction(t *testing.T) {
	db := storetest.Open(t, storetest.SQLite)
	bg := context.Background()
	waitWriter := func() {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); store.WriteWaiters(db) < 1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no writer waiting")
			}
		}
	}
	ctxA, a := db.NewUnit(bg, store.UnitHooks{})
	ctxB, b := db.NewUnit(bg, store.UnitHooks{})
	// A's write needs an answer: A takes the writer and holds it.
	if err := a.Work().InTx(ctxA, func(tx *store.Tx) error { return insertMerchant(ctxA, tx, "mer_pa") }); err != nil {
		t.Fatal(err)
	}
	inserted, fail, bErr := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		bErr <- b.Work().InTx(ctxB, func(tx *store.Tx) error {
			// Undoing the nested step's savepoint needs the writer: B
			// waits for it while A holds it.
			_ = b.Work().InTx(ctxB, func(*store.Tx) error { return errors.New("step refused") })
			_ = insertMerchant(ctxB, tx, "mer_pleak")
			close(inserted)
			<-fail
			return errors.New("the request fails")
		})
	}()
	waitWriter()
	aDone := make(chan error, 1)
	go func() { aDone <- a.Commit(ctxA, nil) }() // parks for B
	<-inserted
	if !store.SharesParked(b) {
		close(fail)
		t.Fatal("B did not go on in A's parked transaction: the case under test did not happen")
	}
	ctxC, c := db.NewUnit(bg, store.UnitHooks{})
	cWrote := make(chan error, 1)
	go func() {
		cWrote <- c.Work().InTx(ctxC, func(tx *store.Tx) error { return insertMerchant(ctxC, tx, "mer_pc") })
	}()
	waitWriter()
	close(fail)
	<-bErr
	b.Rollback()
	if err := <-cWrote; err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctxC, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-aDone; !store.IsTransient(err) {
		t.Fatalf("A's commit: %v, want the transient failure of an aborted group", err)
	}
	if n := countMerchants(t, db, "mer_pleak"); n != 0 {
		t.Errorf("B rolled back, yet %d of its writes committed", n)
	}
	if countMerchants(t, db, "mer_pa") != 0 || countMerchants(t, db, "mer_pc") != 1 {
		t.Error("A's aborted write committed, or C's write is missing")
	}
}
