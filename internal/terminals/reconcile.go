package terminals

import (
	"context"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// A live terminal payment whose authorisation got no answer (the gateway
// timed out, or payd died during the call) stays authorizing. Two things
// settle it, whichever comes first, each recording the same outcome once
// (the intent is recorded under the payment's id, so a second recording
// returns the first): the POS retrying its request under the same
// Idempotency-Key (which asks the gateway again under the same idempotency
// key, so it cannot authorise twice), and reconciliation, which asks the
// gateway about the payment's reference and never authorises (it could not:
// the card data lived only in the request's memory).

// OpenAuthorization is a live terminal payment still waiting for its
// gateway's answer.
type OpenAuthorization struct {
	ID         string
	MerchantID string
	UpdatedAt  time.Time
}

// openBatch bounds the payments one reconciliation run asks about.
const openBatch = 500

// OpenAuthorizations lists the live terminal payments authorizing that last
// changed before olderThan, oldest first (the partial index
// terminal_payments_authorizing holds exactly those rows).
func (s *Service) OpenAuthorizations(ctx context.Context, olderThan time.Time) ([]OpenAuthorization, error) {
	rows, err := s.db.Query(ctx, `SELECT id, merchant_id, updated_at FROM terminal_payments
		WHERE livemode = TRUE AND status = 'authorizing' AND updated_at < ? ORDER BY updated_at LIMIT ?`,
		store.Micros(olderThan), openBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OpenAuthorization
	for rows.Next() {
		var o OpenAuthorization
		var updated int64
		if err := rows.Scan(&o.ID, &o.MerchantID, &updated); err != nil {
			return nil, err
		}
		o.UpdatedAt = store.FromMicros(updated)
		out = append(out, o)
	}
	return out, rows.Err()
}

// DeclineNotReceived is the decline code of a terminal payment the card
// gateway never received: nothing was authorised.
const DeclineNotReceived = "processing_error"

// ReconcileAuthorization asks the gateway where a terminal payment stands
// and records the answer (an approval: the succeeded intent with its
// ledger credit; a decline: the canceled intent), once whoever else records
// it. A gateway with no record of the payment has never authorised it; that
// is recorded as a decline only when no request holds the payment at its
// recovery point (a POS retrying within its grace resumes it
// and sends it). It returns the payment's status afterwards.
func (s *Service) ReconcileAuthorization(ctx context.Context, payID string) (string, error) {
	var (
		p       auth.Principal
		cp      payments.CardPresent
		status  string
		outlet  *string
		created int64
	)
	err := s.db.QueryRow(ctx, `SELECT tp.merchant_id, tp.livemode, tp.principal_id, tp.terminal_id, tp.amount_minor, tp.currency,
		tp.brand, tp.last4, tp.entry_mode, tp.status, t.outlet_id, tp.created_at, tp.capture_method
		FROM terminal_payments tp JOIN terminals t ON t.id = tp.terminal_id WHERE tp.id = ?`, payID).Scan(
		&p.MerchantID, &p.Livemode, &p.ID, &cp.TerminalID, &cp.AmountMinor, &cp.Currency,
		&cp.Brand, &cp.Last4, &cp.EntryMode, &status, &outlet, &created, &cp.CaptureMethod)
	if err != nil {
		return "", err
	}
	if status != statusAuthorizing {
		return status, nil
	}
	recorder := s.recorder.Load()
	if recorder == nil {
		return status, errNotWired
	}
	gw, err := s.gateways(ctx, p.MerchantID, p.Livemode)
	if err != nil {
		return status, err
	}
	lookup, ok := gw.(AuthorizationLookup)
	if !ok {
		return status, nil // an in-process gateway never leaves a payment authorizing
	}
	res, found, err := lookup.LookupAuthorization(ctx, payID)
	if err != nil {
		return status, err
	}
	cp.IdempotencyKey = payID
	if outlet != nil {
		cp.OutletID = *outlet
	}
	if found {
		cp.Approved, cp.AuthCode, cp.DeclineCode = res.Approved, res.AuthCode, res.DeclineCode
		if !res.Approved && cp.DeclineCode == "" {
			cp.DeclineCode = "generic_decline"
		}
	} else {
		// Decided in the transaction that checks the key: a retry taking
		// the key over is either seen here or finds the payment canceled.
		held := true
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if held, err = s.holds(ctx, tx, payID, tx.Now()); err != nil || held {
				return err
			}
			res, err := tx.Exec(ctx, "UPDATE terminal_payments SET status = ?, updated_at = ? WHERE id = ? AND status = ?",
				statusCanceled, store.Micros(tx.Now()), payID, statusAuthorizing)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				held = true // settled meanwhile
			}
			return nil
		})
		if err != nil || held {
			return status, err
		}
		cp.DeclineCode = DeclineNotReceived
	}
	intent, err := recorder.RecordCardPresent(ctx, store.NoClaim, p, cp)
	if err != nil {
		return status, err
	}
	if err := s.finishPayment(ctx, s.db.Within(store.NoClaim), payID, intent); err != nil {
		return status, err
	}
	s.log.Info("terminal payment reconciled", "terminal_payment", payID, "payment_intent", intent.ID, "status", intent.Status)
	if intent.Status == payments.Succeeded || intent.Status == payments.RequiresCapture {
		return statusSucceeded, nil
	}
	return statusCanceled, nil
}
