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

// post writes the refund's movements of one transaction, after everything
// else the transaction writes: the merchant's balance rows are what
// concurrent refunds and payments wait for, so their locks are held as
// briefly as possible. created adds the hold of a new refund (available →
// reserved; a short available balance is the 402 insufficient_balance, and
// the caller's transaction then rolls back). outcome, when not "", is what
// follows: KindRefundSettlement or KindRefundFailure.
func post(ctx context.Context, tx *store.Tx, r *Refund, created bool, outcome string) error {
	var txns []ledger.Transaction
	if created {
		txns = append(txns, posting(r, KindRefund, ledger.Available, ledger.Reserved))
	}
	switch outcome {
	case KindRefundSettlement:
		txns = append(txns, posting(r, KindRefundSettlement, ledger.Reserved, ledger.ProviderClearing))
	case KindRefundFailure:
		txns = append(txns, posting(r, KindRefundFailure, ledger.Reserved, ledger.Available))
	}
	var err error
	switch {
	case len(txns) == 2 && outcome == KindRefundSettlement:
		// Held and settled at once: one update per balance row (reserved
		// nets to zero; available is still checked against the amount).
		_, err = ledger.PostMany(ctx, tx, txns)
	default:
		// A hold and its release would net available to zero and skip its
		// check: they are posted one after the other.
		for _, t := range txns {
			if _, err = ledger.Post(ctx, tx, t); err != nil {
				break
			}
		}
	}
	if errors.Is(err, ledger.ErrInsufficientFunds) {
		return errs.PaymentRequired("insufficient_balance", "the available balance is lower than the refund amount; nothing was refunded")
	}
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
