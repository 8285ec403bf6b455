package ledger_test

import (
	"context"
	"errors"
	"testing"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// dispute withdraws amt from available towards the provider's clearing
// account, as a dispute does; overdraw lets available go below zero.
func dispute(ctx context.Context, tx *store.Tx, m string, amt int64, overdraw bool) error {
	clearing := ledger.AccountRef{MerchantID: m, Currency: "DJF", Kind: ledger.ProviderClearing, Provider: "wallet_a"}
	_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m, Kind: ledger.KindDispute, Reference: "dp_1", Overdraw: overdraw,
		Entries: []ledger.Entry{{acct(m, "DJF", ledger.Available), -amt}, {clearing, amt}}})
	return err
}

// TestOverdrawTakesAvailableNegativeAndDebitsStillSeeTheSum: a dispute's
// withdrawal may take available below zero; afterwards an ordinary debit is
// checked against the account's sum (the negative slot included), credits
// pay the deficit back, and Verify accepts the negative balance only because
// a dispute made it.
func TestOverdrawTakesAvailableNegativeAndDebitsStillSeeTheSum(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m := "mer_od"
		bal := func() int64 {
			b, err := ledger.AccountBalance(ctx, db, acct(m, "DJF", ledger.Available))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		in := func(f func(tx *store.Tx) error) error { return db.InTx(ctx, f) }
		if err := in(func(tx *store.Tx) error { return topup(ctx, tx, m, "DJF", 300) }); err != nil {
			t.Fatal(err)
		}
		// Without Overdraw the same debit is refused.
		if err := in(func(tx *store.Tx) error { return dispute(ctx, tx, m, 1000, false) }); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("plain debit: %v", err)
		}
		// Overdraw is only for the dispute kind.
		err := in(func(tx *store.Tx) error {
			_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m, Kind: "refund", Overdraw: true, Entries: []ledger.Entry{
				{acct(m, "DJF", ledger.Available), -1000}, {acct(m, "DJF", ledger.Reserved), 1000}}})
			return err
		})
		if !errors.Is(err, ledger.ErrInvalidEntry) {
			t.Fatalf("overdraw of another kind: %v", err)
		}
		if err := in(func(tx *store.Tx) error { return dispute(ctx, tx, m, 1000, true) }); err != nil {
			t.Fatal(err)
		}
		if b := bal(); b != -700 {
			t.Fatalf("available %d, want -700", b)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatalf("verify: %v", err)
		}
		// Credits land; a debit larger than the sum is refused even though
		// the credited slot alone would cover it.
		for range 4 {
			if err := in(func(tx *store.Tx) error { return topup(ctx, tx, m, "DJF", 250) }); err != nil {
				t.Fatal(err)
			}
		}
		if b := bal(); b != 300 {
			t.Fatalf("available %d, want 300", b)
		}
		payout := func(amt int64) error {
			return in(func(tx *store.Tx) error {
				_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m, Kind: "payout_reserve", Entries: []ledger.Entry{
					{acct(m, "DJF", ledger.Available), -amt}, {acct(m, "DJF", ledger.Reserved), amt}}})
				return err
			})
		}
		if err := payout(301); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("debit above the sum: %v", err)
		}
		if err := payout(300); err != nil {
			t.Fatalf("debit of the sum: %v", err)
		}
		if b := bal(); b != 0 {
			t.Fatalf("available %d, want 0", b)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatalf("verify: %v", err)
		}
	})
}
