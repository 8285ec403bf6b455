package refunds_test

import (
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

// TestEveryIntentKind: a wallet, a bank, a hosted card and a card-present
// payment can each be refunded; the money leaves towards the intent's
// provider.
func TestEveryIntentKind(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		for _, k := range []struct {
			name     string
			pay      func() string
			currency string
			provider string
		}{
			{"wallet", func() string { return walletPayment(t, e, 1200) }, "DJF", "wallet_c"},
			{"bank", func() string { return bankPayment(t, e, e.SK, 1200) }, "DJF", "bank_a"},
			{"hosted card", func() string { return cardPayment(t, e, 1200) }, "USD", "wallet_a"},
			{"card-present", func() string { return cardPresentPayment(t, e, 1200) }, "DJF", "wallet_a"},
		} {
			t.Run(k.name, func(t *testing.T) {
				pi := k.pay()
				clearing := ledger.AccountRef{MerchantID: e.Merchant.MerchantID, Currency: k.currency, Kind: ledger.ProviderClearing, Provider: k.provider}
				before, err := ledger.AccountBalance(t.Context(), e.Main.DB, clearing)
				if err != nil {
					t.Fatal(err)
				}
				re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 200}, "")
				if re.Status != "succeeded" || re.Currency != k.currency {
					t.Fatalf("refund %+v", re)
				}
				after, err := ledger.AccountBalance(t.Context(), e.Main.DB, clearing)
				if err != nil {
					t.Fatal(err)
				}
				if after-before != 200 {
					t.Fatalf("%s clearing moved by %d, want 200", k.provider, after-before)
				}
				rest := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi}, "")
				if rest.AmountMinor != 1000 {
					t.Fatalf("rest %+v", rest)
				}
				if in := getIntent(t, e, e.SK, pi); !in.Refunded || in.AmountRefundedMinor != 1200 || in.Status != "succeeded" {
					t.Fatalf("intent %+v", in)
				}
			})
		}
		verifyLedger(t, e)
	})
}
