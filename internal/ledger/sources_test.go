package ledger_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// move posts one movement of amount between two of m's accounts, with the
// source's id as reference, exactly as a capability does.
func move(ctx context.Context, db *store.DB, m, kind, ref string, from, to ledger.AccountKind, amount int64) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m, Kind: kind, Reference: ref, Entries: []ledger.Entry{
			{Account: acct(m, "DJF", from), Amount: -amount}, {Account: acct(m, "DJF", to), Amount: amount}}})
		return err
	})
}

// TestVerifyFindsDoubleEffectsInBalance: a payout's reserve and paid
// movements copied, and a payment credited twice, keep every sum balanced;
// Verify names each source. A payout that failed and was reserved again is a
// retry, not a double effect, and passes.
func TestVerifyFindsDoubleEffectsInBalance(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_1", "DJF", 10_000) }); err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			kind, ref string
			from, to  ledger.AccountKind
		}{
			// A payout that failed, was retried and paid: legitimate.
			{"payout_reserve", "po_retried", ledger.Available, ledger.Reserved},
			{"payout_failed", "po_retried", ledger.Reserved, ledger.Available},
			{"payout_reserve", "po_retried", ledger.Available, ledger.Reserved},
			{"payout_paid", "po_retried", ledger.Reserved, ledger.ProviderClearing},
			// A payment credited once.
			{"payment_succeeded", "pi_once", ledger.ProviderClearing, ledger.Available},
		}
		for _, s := range steps {
			if err := move(ctx, db, "mer_1", s.kind, s.ref, s.from, s.to, 100); err != nil {
				t.Fatal(err)
			}
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatalf("a retried payout and a single credit: %v", err)
		}
		// The doubled effects, each copied as a balanced pair.
		doubled := []struct {
			kind, ref string
			from, to  ledger.AccountKind
		}{
			{"payout_reserve", "po_doubled", ledger.Available, ledger.Reserved},
			{"payout_paid", "po_doubled", ledger.Reserved, ledger.ProviderClearing},
			{"payout_reserve", "po_doubled", ledger.Available, ledger.Reserved},
			{"payout_paid", "po_doubled", ledger.Reserved, ledger.ProviderClearing},
			{"payment_succeeded", "pi_twice", ledger.ProviderClearing, ledger.Available},
			{"payment_succeeded", "pi_twice", ledger.ProviderClearing, ledger.Available},
			{"refund", "re_twice", ledger.Available, ledger.Reserved},
			{"refund", "re_twice", ledger.Available, ledger.Reserved},
		}
		for _, s := range doubled {
			if err := move(ctx, db, "mer_1", s.kind, s.ref, s.from, s.to, 100); err != nil {
				t.Fatal(err)
			}
		}
		err := ledger.Verify(ctx, db)
		var faults *ledger.SourceFaultsError
		if !errors.As(err, &faults) {
			t.Fatalf("Verify with doubled effects: %v", err)
		}
		got := map[string]bool{}
		for _, f := range faults.Faults {
			got[f.Reference+" "+f.Rule] = true
		}
		for _, want := range []string{
			"po_doubled payout paid more than once",
			"po_doubled payout reserved again without a release",
			"pi_twice payment intent credited more than once",
			"re_twice refund held more than once",
		} {
			if !got[want] {
				t.Errorf("Verify did not report %q: %v", want, err)
			}
		}
		if faults.Total != 4 || strings.Contains(err.Error(), "po_retried") || strings.Contains(err.Error(), "pi_once") {
			t.Fatalf("Verify reported %d faults, or a legitimate source: %v", faults.Total, err)
		}
	})
}
