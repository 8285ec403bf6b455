package banking

import (
	"context"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

// Money moves between the two agents' settlement accounts: each
// participant's `available` account in the transfer's currency and mode.
// A transfer settled at once is one posting, debtor available → creditor
// available. A transfer that is not settled at once (ACSP, ACWP) first moves
// the amount from the debtor's available account to the debtor's
// settlement_clearing account (money in flight, so it cannot be spent twice),
// then from there to the creditor on settlement, or back to the debtor when a
// hold is rejected. Every posting is made in the database transaction of the
// status change it belongs to, with the transfer's UETR as reference: the
// id the participants know it by, which their balance history shows as the
// movement's source.

// Ledger transaction kinds.
const (
	ledgerSettle  = "transfer_settlement" // debtor (available or clearing) → creditor available
	ledgerAccept  = "transfer_accept"     // debtor available → debtor settlement clearing
	ledgerRelease = "transfer_release"    // debtor settlement clearing → debtor available (hold rejected)
	ledgerReturn  = "transfer_return"     // creditor available → debtor available
)

func account(merchantID string, livemode bool, currency string, kind ledger.AccountKind) ledger.AccountRef {
	return ledger.AccountRef{MerchantID: merchantID, Livemode: livemode, Currency: currency, Kind: kind}
}

func move(t *Transfer, kind string, from, to ledger.AccountRef, amount int64) ledger.Transaction {
	return ledger.Transaction{MerchantID: t.DebtorMerchantID, Livemode: t.Livemode, Kind: kind, Reference: t.UETR,
		Entries: []ledger.Entry{{Account: from, Amount: -amount}, {Account: to, Amount: amount}}}
}

// postSettleNow moves the amount straight from the debtor's to the
// creditor's settlement account. Submit has checked the funds against the
// locked balance, so ledger.ErrInsufficientFunds here would be a bug.
func postSettleNow(ctx context.Context, tx *store.Tx, t *Transfer) error {
	_, err := ledger.Post(ctx, tx, move(t, ledgerSettle,
		account(t.DebtorMerchantID, t.Livemode, t.Currency, ledger.Available),
		account(t.CreditorMerchantID, t.Livemode, t.Currency, ledger.Available), t.AmountMinor))
	return err
}

// postAccept puts the amount in flight (funds checked as for postSettleNow).
func postAccept(ctx context.Context, tx *store.Tx, t *Transfer) error {
	_, err := ledger.Post(ctx, tx, move(t, ledgerAccept,
		account(t.DebtorMerchantID, t.Livemode, t.Currency, ledger.Available),
		account(t.DebtorMerchantID, t.Livemode, t.Currency, ledger.SettlementClearing), t.AmountMinor))
	return err
}

// postSettleInFlight completes an accepted transfer.
func postSettleInFlight(ctx context.Context, tx *store.Tx, t *Transfer) error {
	_, err := ledger.Post(ctx, tx, move(t, ledgerSettle,
		account(t.DebtorMerchantID, t.Livemode, t.Currency, ledger.SettlementClearing),
		account(t.CreditorMerchantID, t.Livemode, t.Currency, ledger.Available), t.AmountMinor))
	return err
}

// postRelease gives an accepted transfer's amount back to the debtor.
func postRelease(ctx context.Context, tx *store.Tx, t *Transfer) error {
	_, err := ledger.Post(ctx, tx, move(t, ledgerRelease,
		account(t.DebtorMerchantID, t.Livemode, t.Currency, ledger.SettlementClearing),
		account(t.DebtorMerchantID, t.Livemode, t.Currency, ledger.Available), t.AmountMinor))
	return err
}

// postReturn moves part of a settled transfer back from the creditor's to
// the debtor's settlement account. ledger.ErrInsufficientFunds means the
// creditor agent's settlement balance is short.
func postReturn(ctx context.Context, tx *store.Tx, t *Transfer, amount int64) error {
	_, err := ledger.Post(ctx, tx, move(t, ledgerReturn,
		account(t.CreditorMerchantID, t.Livemode, t.Currency, ledger.Available),
		account(t.DebtorMerchantID, t.Livemode, t.Currency, ledger.Available), amount))
	return err
}
