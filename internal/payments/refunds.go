package payments

import (
	"context"
	"errors"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

// A payment intent's refunds are owned by the refunds capability; the
// intent keeps two running sums of them, written only through the functions
// below (in the refund's own transaction):
//
//	amount_refunding_minor  every refund not failed or canceled (what is no
//	                        longer refundable); never above amount_captured_minor
//	amount_refunded_minor   succeeded refunds only (shown on the intent)
//
// The bound is a guard in the UPDATE itself, so racing refunds can never
// refund more than was captured on either engine. It is written once, here,
// in Go (refundable) and in SQL (refundableSQL) side by side; the refunds
// capability checks a refund's amount against it by name (FitsRefundable,
// then ReserveRefund in the refund's transaction).

// refundableSQL is what is still refundable of an intent, as SQL over its
// row: the captured amount less every refund not failed or canceled.
const refundableSQL = "amount_captured_minor - amount_refunding_minor"

// refundable is refundableSQL in Go.
func refundable(captured, refunding int64) int64 { return captured - refunding }

// FitsRefundable reports whether a refund of amount fits in left, what is
// still refundable: the rule ReserveRefund enforces race-safe.
func FitsRefundable(amount, left int64) bool { return amount > 0 && amount <= left }

// ErrExceedsRefundable is returned by ReserveRefund when the amount asked
// for is more than is still refundable (or nothing is left).
var ErrExceedsRefundable = errors.New("payments: the amount exceeds what is still refundable")

// chargeDisputed is the 409 for a refund of a disputed intent: the money is
// with the cardholder's bank until the dispute ends.
func chargeDisputed(id string) error {
	return errs.Conflict("charge_disputed", "payment intent %s is disputed; it cannot be refunded (answer the dispute instead)", id)
}

// RefundTarget is what a refund needs to know about its payment intent.
type RefundTarget struct {
	IntentID       string
	Currency       string
	Provider       string
	ProviderRef    string // the provider's reference of the payment (card-present: the terminal payment's id)
	CustomerMSISDN string // as the provider wants it; "" for card payments
	CardPresent    bool
	// Refundable is what was still refundable when the intent was read.
	Refundable int64
}

// RefundTargetOf reads the intent a refund is asked for (404 when it is not
// the merchant's in this mode; 409 invalid_state unless it succeeded).
func RefundTargetOf(ctx context.Context, q store.Querier, merchantID string, livemode bool, intentID string) (RefundTarget, error) {
	r, refunding, err := loadForRefund(ctx, q, merchantID, livemode, intentID, false)
	if err != nil {
		return RefundTarget{}, err
	}
	return refundTarget(r, refunding), nil
}

// ReserveRefund marks amount of the intent as being refunded, inside tx: it
// returns ErrExceedsRefundable when less than amount (or nothing) is left,
// and the errors of RefundTargetOf.
func ReserveRefund(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, intentID string, amount int64) (RefundTarget, error) {
	r, refunding, err := loadForRefund(ctx, tx, merchantID, livemode, intentID, true)
	if err != nil {
		return RefundTarget{}, err
	}
	if !FitsRefundable(amount, refundable(r.AmountCapturedMinor, refunding)) {
		return RefundTarget{}, ErrExceedsRefundable
	}
	res, err := tx.Exec(ctx, `UPDATE payment_intents SET amount_refunding_minor = amount_refunding_minor + ?
		WHERE id = ? AND status = 'succeeded' AND disputed = FALSE AND `+refundableSQL+` >= ?`, amount, r.ID, amount)
	if err != nil {
		return RefundTarget{}, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		// Under the row lock taken by loadForRefund nothing changed since the
		// read; on SQLite's single writer neither. Tell the two guards apart.
		var disputed bool
		if err := tx.QueryRow(ctx, "SELECT disputed FROM payment_intents WHERE id = ?", r.ID).Scan(&disputed); err == nil && disputed {
			return RefundTarget{}, chargeDisputed(r.ID)
		}
		return RefundTarget{}, ErrExceedsRefundable
	}
	return refundTarget(r, refunding+amount), nil
}

// ReleaseRefund returns amount to the intent's refundable sum, inside tx: a
// refund failed or was canceled.
func ReleaseRefund(ctx context.Context, tx *store.Tx, intentID string, amount int64) error {
	return adjustRefunds(ctx, tx, `UPDATE payment_intents SET amount_refunding_minor = amount_refunding_minor - ?
		WHERE id = ? AND amount_refunding_minor >= ?`, intentID, amount)
}

// SettleRefund adds amount to the intent's amount_refunded_minor, inside tx:
// a refund succeeded.
func SettleRefund(ctx context.Context, tx *store.Tx, intentID string, amount int64) error {
	return adjustRefunds(ctx, tx, `UPDATE payment_intents SET amount_refunded_minor = amount_refunded_minor + ?
		WHERE id = ? AND amount_refunding_minor - amount_refunded_minor >= ?`, intentID, amount)
}

func adjustRefunds(ctx context.Context, tx *store.Tx, q, intentID string, amount int64) error {
	res, err := tx.Exec(ctx, q, amount, intentID, amount)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errs.Internal(errors.New("payments: the refund sums of intent " + intentID + " do not allow this change"))
	}
	return nil
}

// loadForRefund reads the intent and its refunding sum; lock takes the row
// lock (PostgreSQL) for the read-then-write of ReserveRefund. Like load, it
// reads by primary key alone (store.Owned).
func loadForRefund(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string, lock bool) (*record, int64, error) {
	query := "SELECT " + columns + ", amount_refunding_minor FROM payment_intents WHERE id = ?"
	if lock {
		query += q.Dialect().ForUpdate()
	}
	var refunding int64
	r, err := scan(withExtra{q.QueryRow(ctx, query, id), &refunding})
	if r, err = store.Owned(r, err, merchantID, livemode); store.IsNotFound(err) {
		return nil, 0, errs.NotFound("payment_intent", id)
	}
	if err != nil {
		return nil, 0, err
	}
	if r.Status != Succeeded {
		return nil, 0, errs.InvalidState("payment intent %s is %s; only a succeeded payment intent can be refunded", r.ID, r.Status)
	}
	if r.Disputed {
		return nil, 0, chargeDisputed(r.ID)
	}
	return r, refunding, nil
}

// withExtra scans the intent's columns followed by one more.
type withExtra struct {
	row   interface{ Scan(...any) error }
	extra any
}

func (w withExtra) Scan(dest ...any) error { return w.row.Scan(append(dest, w.extra)...) }

func refundTarget(r *record, refunding int64) RefundTarget {
	t := RefundTarget{IntentID: r.ID, Currency: r.Currency, Provider: r.Provider, ProviderRef: r.providerRef,
		CardPresent: r.flow == flowCardPresent, Refundable: refundable(r.AmountCapturedMinor, refunding)}
	if r.CustomerMSISDN != nil {
		t.CustomerMSISDN, _ = ProviderMSISDN(r.Provider, *r.CustomerMSISDN)
	}
	return t
}
