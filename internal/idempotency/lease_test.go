package idempotency

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestLateReleaseLeavesATakenOverKeyAlone: a run past a recovery point that
// was cut off from the database (its lease renewals stopped, its Abort's
// release failed and is retried in the background, releaseLater) must not
// release the lease of a retry that took the key over once its own lease
// ran out: a third run would then take the key over too and repeat the
// provider call the second is making. Nor may its own later writes renew
// the key it lost (its next transaction refuses: 409).
func TestLateReleaseLeavesATakenOverKeyAlone(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const lease = time.Second
		req := Request{Scope: Scope{MerchantID: "mch_lease", PrincipalID: "key_lease"}, Key: "k1", Method: "POST",
			Path: "/v1/test", Hash: RequestHash("POST", "/v1/test", nil), Lease: lease}

		// Run A commits a recovery point, then loses the database: its
		// renewals stop with it.
		actx, a := Start(ctx, db, req, Found{})
		if err := a.RecoveryPoint(actx, "test.call", "obj_a"); err != nil {
			t.Fatal(err)
		}
		a.stopKeeping()
		time.Sleep(lease + 50*time.Millisecond)

		// Run B (a retry) takes the key over and commits its own point.
		found, err := Lookup(ctx, db, req)
		if err != nil || found.Resume == nil {
			t.Fatalf("after A's lease: %+v, %v; want a recovery point to resume", found, err)
		}
		bctx, b := Start(ctx, db, req, found)
		if err := b.RecoveryPoint(bctx, "test.call", "obj_b"); err != nil {
			t.Fatalf("B takes the key over: %v", err)
		}
		defer b.Abort(ctx)

		// A's background release now reaches the database.
		if err := a.release(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := Lookup(ctx, db, req); !errors.Is(err, ErrInUse) {
			t.Fatalf("while B runs, a retry's Lookup: %v; want idempotency_key_in_use (A released B's lease)", err)
		}

		// A's process comes back and writes again: the key is B's.
		err = db.Within(a).InTx(actx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "UPDATE idempotency_keys SET recovery_ref = recovery_ref WHERE idem_key = 'none'")
			return err
		})
		if err == nil {
			t.Fatal("A wrote on after B took its key over")
		}
		if !errors.Is(a.Refused(), ErrInUse) {
			t.Fatalf("A's refusal: %v; want idempotency_key_in_use", a.Refused())
		}
		a.Abort(ctx)
		if _, err := Lookup(ctx, db, req); !errors.Is(err, ErrInUse) {
			t.Fatalf("after A aborted, a retry's Lookup: %v; want idempotency_key_in_use (B still runs)", err)
		}
	})
}
