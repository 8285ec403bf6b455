package refunds

import (
	"context"
	"errors"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

// The kinds of ledger transaction refunds post; the reference of each is the
// refund's id. Balance reports map these kinds to their own types.
const (
	KindRefund           = "refund"            // at creation: available → reserved
	KindRefundFailure    = "refund_failure"    // failure or cancel: reserved → available
	KindRefundSettlement = "refund_settlement" // success: reserved → the provider's clearing account
)

// postReserve holds the refund's amount: available → reserved. A short
// available balance is the 402 insufficient_balance (the caller's
// transaction then rolls back and nothing is written).
func postReserve(ctx context.Context, tx *store.Tx, r *Refund) error {
	_, err := ledger.Post(ctx, tx, posting(r, KindRefund, ledger.Available, ledger.Reserved))
	if errors.Is(err, ledger.ErrInsufficientFunds) {
		return errs.PaymentRequired("insufficient_balance", "the available balance is lower than the refund amount; nothing was refunded")
	}
	return err
}

// postRelease returns a failed or canceled refund's amount: reserved → available.
func postRelease(ctx context.Context, tx *store.Tx, r *Refund) error {
	_, err := ledger.Post(ctx, tx, posting(r, KindRefundFailure, ledger.Reserved, ledger.Available))
	return err
}

// postSettlement lets a succeeded refund's amount leave: reserved → the
// provider's clearing account (payd owes the provider what it paid back).
func postSettlement(ctx context.Context, tx *store.Tx, r *Refund) error {
	_, err := ledger.Post(ctx, tx, posting(r, KindRefundSettlement, ledger.Reserved, ledger.ProviderClearing))
	return err
}

// posting moves the refund's amount from one of the merchant's accounts to another.
func posting(r *Refund, kind string, from, to ledger.AccountKind) ledger.Transaction {
	acct := func(k ledger.AccountKind) ledger.AccountRef {
		a := ledger.AccountRef{MerchantID: r.MerchantID, Livemode: r.Livemode, Currency: r.Currency, Kind: k}
		if k == ledger.ProviderClearing {
			a.Provider = r.Provider
		}
		return a
	}
	return ledger.Transaction{MerchantID: r.MerchantID, Livemode: r.Livemode, Kind: kind, Reference: r.ID,
		Entries: []ledger.Entry{{Account: acct(from), Amount: -r.AmountMinor}, {Account: acct(to), Amount: r.AmountMinor}}}
}
