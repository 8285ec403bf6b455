package payments_test

import (
	"context"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/payments"
)

// TestCreateMany: a batch answers each intent as Create would (a push
// payment approved at once under the success scenario, an SMS code rail
// waiting for its code, a refusal by a magic number (account_closed), a bad request refused
// alone), writes every accepted intent with its events once, credits only
// the successes, and leaves the ledger balanced.
func TestCreateMany(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		p := auth.Principal{ID: "test", MerchantID: e.Merchant.MerchantID, Kind: "secret"}
		amt := func(n int64) *int64 { return &n }
		str := func(s string) *string { return &s }
		in := []payments.NewIntent{
			{Principal: p, Params: payments.CreateParams{AmountMinor: amt(1000), Currency: "DJF", Provider: "wallet_c", CustomerMSISDN: str("+25377123456"), Scenario: "success"}},
			{Principal: p, Params: payments.CreateParams{AmountMinor: amt(2000), Currency: "DJF", Provider: "bank_a", CustomerMSISDN: str("+25377123456")}},
			{Principal: p, Params: payments.CreateParams{AmountMinor: amt(3000), Currency: "DJF", Provider: "bank_a", CustomerMSISDN: str("+253000000009")}},
			{Principal: p, Params: payments.CreateParams{AmountMinor: amt(-5), Currency: "DJF", Provider: "bank_a", CustomerMSISDN: str("+25377123456")}},
			{Principal: p, Params: payments.CreateParams{AmountMinor: amt(4000), Currency: "DJF", Provider: "wallet_c", CustomerMSISDN: str("+25377123458"), Scenario: "success"}},
		}
		out, err := e.Main.PaymentIntents().CreateMany(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		// The batch itself must have worked: a failed batch falls back to
		// recording each intent alone, which gives the same answers.
		if n := e.Main.PaymentIntents().BatchFallbacks(); n != 0 {
			t.Fatalf("%d batches fell back to one intent at a time", n)
		}
		want := []payments.Status{payments.Succeeded, payments.RequiresAction, payments.Canceled, "", payments.Succeeded}
		for i, c := range out {
			if want[i] == "" {
				if e := errs.As(c.Err); e == nil || e.Kind != errs.KindInvalid || c.Intent.ID != "" {
					t.Fatalf("intent %d: %+v, want a 400 and no intent", i, c)
				}
				continue
			}
			if c.Intent.Status != want[i] {
				t.Fatalf("intent %d is %s (%v), want %s", i, c.Intent.Status, c.Err, want[i])
			}
			got := decode(t, e.Get("/v1/payment_intents/"+c.Intent.ID))
			if got.Status != string(want[i]) {
				t.Fatalf("intent %d is stored %s, want %s", i, got.Status, want[i])
			}
		}
		if c := out[2]; c.Err == nil && (c.Intent.LastError == nil || c.Intent.LastError.Code == "") {
			t.Fatalf("the refused intent carries no last_error: %+v", c.Intent)
		}
		var intents, created, succeeded int
		db := e.Main.DB
		db.QueryRow(ctx, "SELECT COUNT(*) FROM payment_intents").Scan(&intents)
		db.QueryRow(ctx, "SELECT COUNT(*) FROM events WHERE type = 'payment_intent.created'").Scan(&created)
		db.QueryRow(ctx, "SELECT COUNT(*) FROM events WHERE type = 'payment_intent.succeeded'").Scan(&succeeded)
		if intents != 4 || created != 4 || succeeded != 2 {
			t.Fatalf("%d intents, %d created and %d succeeded events; want 4, 4, 2", intents, created, succeeded)
		}
		bs, err := ledger.Balances(ctx, db, e.Merchant.MerchantID, false)
		if err != nil {
			t.Fatal(err)
		}
		var avail int64
		for _, b := range bs {
			if b.Currency == "DJF" {
				avail = b.Available
			}
		}
		if avail != 5000 {
			t.Fatalf("available %d, want 5000 (the two successes)", avail)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}
