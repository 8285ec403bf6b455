package reports

import "sort"

// Type is what a balance transaction is, as merchants see it.
type Type string

// The types of balance transaction.
const (
	TypePayment       Type = "payment"
	TypeRefund        Type = "refund"
	TypeRefundFailure Type = "refund_failure"
	TypePayout        Type = "payout"
	TypePayoutFailure Type = "payout_failure"
	TypeTopup         Type = "topup"
	TypeTransfer      Type = "transfer"
	TypeAdjustment    Type = "adjustment"
	// A dispute's withdrawal (negative) and, when the dispute is won, its
	// reinstatement (positive).
	TypeDispute         Type = "dispute"
	TypeDisputeReversal Type = "dispute_reversal"
)

// Types lists every type, in the order the API documents them.
var Types = []Type{TypePayment, TypeRefund, TypeRefundFailure, TypePayout, TypePayoutFailure, TypeTopup, TypeTransfer, TypeAdjustment,
	TypeDispute, TypeDisputeReversal}

// kindTypes maps every kind of ledger transaction payd posts to the type its
// effect on available is shown as. TestEveryLedgerKindIsMapped reads the code
// base for the kinds it posts and fails when one is missing here. Some kinds
// never touch available (payout_paid, refund_settlement move reserved money
// out); they are mapped all the same, so a future posting that does touch it
// is named sensibly.
var kindTypes = map[string]Type{
	"payment_succeeded": TypePayment, // payments: provider clearing → available

	"refund":            TypeRefund,        // refunds: available → reserved at creation
	"refund_failure":    TypeRefundFailure, // refunds: reserved → available on failure or cancel
	"refund_settlement": TypeRefund,        // refunds: reserved → provider (available untouched)

	"payout_reserve":       TypePayout,        // available → reserved, single payouts and retries
	"payout_batch_reserve": TypePayout,        // available → reserved, a batch's total
	"payout_paid":          TypePayout,        // reserved → provider (available untouched)
	"payout_failed":        TypePayoutFailure, // reserved → available: the rail refused
	"payout_canceled":      TypePayoutFailure, // reserved → available: rejected or canceled

	"sandbox_topup": TypeTopup, // sandbox funding → available

	"transfer_settlement": TypeTransfer, // debtor → creditor available
	"transfer_accept":     TypeTransfer, // debtor available → settlement clearing
	"transfer_release":    TypeTransfer, // settlement clearing → debtor available
	"transfer_return":     TypeTransfer, // creditor available → debtor available

	"dispute":          TypeDispute,         // disputes: available → provider clearing (available may go negative)
	"dispute_reversal": TypeDisputeReversal, // disputes: provider clearing → available, when won

	"sandbox_carry_forward": TypeAdjustment, // the sandbox purge folds old test-mode postings into one
}

// TypeOf returns the balance transaction type of a ledger transaction kind.
// A kind the table does not know is an adjustment (and a failing test).
func TypeOf(kind string) Type {
	if t, ok := kindTypes[kind]; ok {
		return t
	}
	return TypeAdjustment
}

// kindFilter returns the ledger kinds of type t, and for adjustment (which
// also holds every unknown kind) the kinds of every other type to exclude.
func kindFilter(t Type) (in, notIn []string) {
	for k, kt := range kindTypes {
		switch {
		case kt == t:
			in = append(in, k)
		case t == TypeAdjustment:
			notIn = append(notIn, k)
		}
	}
	if t == TypeAdjustment {
		in = nil
	}
	sort.Strings(in)
	sort.Strings(notIn)
	return in, notIn
}

// validType reports whether t is one of Types.
func validType(t Type) bool {
	for _, x := range Types {
		if x == t {
			return true
		}
	}
	return false
}
