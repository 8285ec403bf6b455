package payouts

import (
	"context"
	"sort"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/store"
)

// The kinds of ledger transaction payouts post.
const (
	kindReserve      = "payout_reserve"       // a single payout or a retry: available → reserved
	kindBatchReserve = "payout_batch_reserve" // a batch's total at submission (A) or approval (B)
	kindPaid         = "payout_paid"          // reserved → the provider's clearing account: the money left
	kindFailed       = "payout_failed"        // reserved → available: the rail refused
	kindCanceled     = "payout_canceled"      // reserved → available: rejected on review or canceled with its batch
)

// reserve moves the payouts' amounts from available to reserved in one
// ledger transaction (one pair of entries per currency). A short available
// balance is the 402 insufficient_balance; the caller's transaction then
// rolls back and nothing is reserved.
func reserve(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, kind, ref string, ps []*Payout) error {
	sums := map[string]int64{}
	for _, p := range ps {
		s, err := money.Add(sums[p.Currency], p.Amount)
		if err != nil {
			return err
		}
		sums[p.Currency] = s
	}
	currencies := make([]string, 0, len(sums))
	for c := range sums {
		currencies = append(currencies, c)
	}
	sort.Strings(currencies)
	t := ledger.Transaction{MerchantID: merchantID, Livemode: livemode, Kind: kind, Reference: ref}
	for _, c := range currencies {
		t.Entries = append(t.Entries,
			ledger.Entry{Account: account(merchantID, livemode, c, ledger.Available, ""), Amount: -sums[c]},
			ledger.Entry{Account: account(merchantID, livemode, c, ledger.Reserved, ""), Amount: sums[c]})
	}
	_, err := ledger.Post(ctx, tx, t)
	return insufficient(err)
}

// paidTxn is a payout's succeeded posting: the reserved amount goes to the
// provider's clearing account (payd owes the rail what it paid out).
func paidTxn(p *Payout) ledger.Transaction {
	return ledger.Transaction{MerchantID: p.MerchantID, Livemode: p.Livemode, Kind: kindPaid, Reference: p.ID,
		Entries: []ledger.Entry{
			{Account: account(p.MerchantID, p.Livemode, p.Currency, ledger.Reserved, ""), Amount: -p.Amount},
			{Account: account(p.MerchantID, p.Livemode, p.Currency, ledger.ProviderClearing, p.Provider), Amount: p.Amount},
		}}
}

// releaseTxn returns a payout's reserved amount to available.
func releaseTxn(p *Payout, kind string) ledger.Transaction {
	return ledger.Transaction{MerchantID: p.MerchantID, Livemode: p.Livemode, Kind: kind, Reference: p.ID,
		Entries: []ledger.Entry{
			{Account: account(p.MerchantID, p.Livemode, p.Currency, ledger.Reserved, ""), Amount: -p.Amount},
			{Account: account(p.MerchantID, p.Livemode, p.Currency, ledger.Available, ""), Amount: p.Amount},
		}}
}

func account(merchantID string, livemode bool, currency string, kind ledger.AccountKind, provider string) ledger.AccountRef {
	return ledger.AccountRef{MerchantID: merchantID, Livemode: livemode, Currency: currency, Kind: kind, Provider: provider}
}
