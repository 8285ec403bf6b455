package disputes

import (
	"context"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

// The kinds of ledger transaction disputes post; the reference of each is the
// dispute's id. Balance reports show them as the balance transaction types of
// the same names.
const (
	KindDispute         = "dispute"          // at creation (ledger.KindDispute): available → the provider (available may go below zero)
	KindDisputeReversal = "dispute_reversal" // won: the provider → available
)

// post writes the dispute's movement of one kind in tx, after everything else
// the transaction writes.
func post(ctx context.Context, tx *store.Tx, d *Dispute, kind string) error {
	avail := ledger.AccountRef{MerchantID: d.MerchantID, Livemode: d.Livemode, Currency: d.Currency, Kind: ledger.Available}
	clearing := ledger.AccountRef{MerchantID: d.MerchantID, Livemode: d.Livemode, Currency: d.Currency, Kind: ledger.ProviderClearing,
		Provider: d.Provider}
	t := ledger.Transaction{MerchantID: d.MerchantID, Livemode: d.Livemode, Kind: kind, Reference: d.ID}
	switch kind {
	case KindDispute:
		t.Overdraw = true
		t.Entries = []ledger.Entry{{Account: avail, Amount: -d.AmountMinor}, {Account: clearing, Amount: d.AmountMinor}}
	default:
		t.Entries = []ledger.Entry{{Account: clearing, Amount: -d.AmountMinor}, {Account: avail, Amount: d.AmountMinor}}
	}
	_, err := ledger.Post(ctx, tx, t)
	return err
}
