package payments

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// A live card authorisation held for manual capture (a card-present payment
// taken with capture_method manual) lives at the merchant's card gateway,
// so its capture and its release are provider calls. Each is settled in
// three steps, the call outside any database transaction:
//
//  1. The settlement (capture with its amount, or void with its
//     cancellation_reason) is written to payment_intent_settlements, the
//     intent still requires_capture, and committed with a recovery point on
//     the request's Idempotency-Key. One row per intent at a time: of a
//     capture, a cancel and the expiry job racing, the first to write its
//     row is the one sent; the others answer 409 invalid_state.
//  2. The gateway is called under the payment's own key (<tpay_id>:capture,
//     <tpay_id>:void), so a repeat gets its first answer again.
//  3. Its answer is recorded in one transaction with the row's deletion as
//     the compare-and-set: the capture with its ledger credit and
//     payment_intent.succeeded, or the cancel with payment_intent.canceled.
//
// An answer that never came (a timeout, payd killed during the call) leaves
// the row: a retry of the request under its Idempotency-Key resumes at the
// call, a retry without one that asks for the same thing drives the same
// row, and reconciliation asks the gateway about the authorisation by its
// reference and records what it finds, or, when the call never arrived,
// sends it again under the same key. A void is never abandoned: while the
// gateway refuses or cannot be reached, the row stays and reconciliation
// sends it again every run, so an authorisation payd has decided to release
// never stays held. A capture the gateway refuses while the authorisation
// is still held is dropped: the request answers 502 and the intent stays
// requires_capture for another capture or a cancel.

// The settlements of a held authorisation.
const (
	opCapture = "capture"
	opVoid    = "void"
)

// pointSettle is the recovery point of a request that sent a capture or a
// void to the card gateway; its reference is the intent's id.
const pointSettle = "payment_intent.settle"

// settlement is a capture or void sent (or about to be) whose answer is not
// recorded yet.
type settlement struct {
	op     string
	amount int64
	reason *string
}

// errSettling refuses a step on an intent whose capture or void is in
// flight at the card gateway.
func errSettling(r *record, op string) error {
	what := map[string]string{opCapture: "a capture", opVoid: "a cancel"}[op]
	e := errs.InvalidState("payment intent %s has %s in progress at the card gateway; retrieve it again later", r.ID, what)
	e.Extra = map[string]any{"payment_intent": r.ID}
	return e
}

// holdSettler returns the adapter that captures and releases r's held
// authorisation at its provider, or nil when payd records its capture or
// release by itself (the sandbox).
func (s *Service) holdSettler(ctx context.Context, rd providers.Reader, r *record) (providers.AuthorizationSettler, error) {
	if !r.Livemode || r.Status != RequiresCapture {
		return nil, nil
	}
	a, err := s.adapterFor(ctx, rd, r)
	if err != nil {
		return nil, err
	}
	st, ok := a.(providers.AuthorizationSettler)
	if !ok || !a.Remote() || !st.SettlesHolds(r.payment()) {
		return nil, nil
	}
	return st, nil
}

// resumeSettlement continues a request that committed pointSettle for
// intent id and ended before recording the gateway's answer: it takes the
// key over, then sends the row's call again (the same key at the gateway)
// or, if the intent settled meanwhile, answers it as it is. cl is the
// request's claim.
func (s *Service) resumeSettlement(ctx context.Context, cl store.Claim, merchantID string, livemode bool, id string) (Intent, error) {
	work := s.db.Within(cl)
	ctx = context.WithoutCancel(ctx)
	if err := cl.RecoveryPoint(ctx, pointSettle, id); err != nil {
		return Intent{}, err
	}
	r, err := load(ctx, work, merchantID, livemode, id)
	if err != nil {
		return Intent{}, err
	}
	st, err := s.holdSettler(ctx, work, r)
	if err != nil || st == nil {
		return r.view(), err
	}
	return s.sendSettlement(ctx, work, st, id)
}

// startSettlement writes the settlement of r (read at its version) and
// sends it. errLostRace: r moved meanwhile. An intent with a settlement
// in flight already is driven on when that settlement is the one asked for
// (a retry without the request's key), else 409. cl is the request's claim
// (store.NoClaim for the expiry job), on which the recovery point is
// committed before the call.
func (s *Service) startSettlement(ctx context.Context, cl store.Claim, st providers.AuthorizationSettler, r *record, set settlement) (Intent, error) {
	work := s.db.Within(cl)
	ctx = context.WithoutCancel(ctx)
	inserted := false
	err := work.InTx(ctx, func(tx *store.Tx) error {
		now := store.Micros(tx.Now())
		res, err := tx.Exec(ctx, `INSERT INTO payment_intent_settlements (payment_intent_id, merchant_id, livemode, operation,
			amount_minor, cancellation_reason, created_at, updated_at)
			SELECT id, merchant_id, livemode, ?, ?, ?, ?, ? FROM payment_intents WHERE id = ? AND status = ? AND version = ?
			ON CONFLICT (payment_intent_id) DO NOTHING`,
			set.op, set.amount, set.reason, now, now, r.ID, string(RequiresCapture), r.version)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		inserted = n == 1
		return err
	})
	if err != nil {
		return Intent{}, err
	}
	if !inserted {
		cur, found, err := readSettlement(ctx, work, r.ID)
		switch {
		case err != nil:
			return Intent{}, err
		case !found:
			return Intent{}, errLostRace // the intent moved: decide again
		case cur.op != set.op || cur.amount != set.amount:
			return Intent{}, errSettling(r, cur.op)
		}
	}
	if err := cl.RecoveryPoint(ctx, pointSettle, r.ID); err != nil {
		return Intent{}, err
	}
	return s.sendSettlement(ctx, work, st, r.ID)
}

// sendSettlement sends intent id's settlement to the gateway and records
// the answer. With no settlement left (recorded meanwhile) it answers the
// intent as it is.
func (s *Service) sendSettlement(ctx context.Context, work store.Work, st providers.AuthorizationSettler, id string) (Intent, error) {
	r, err := loadByID(ctx, work, id)
	if err != nil {
		return Intent{}, err
	}
	set, found, err := readSettlement(ctx, work, id)
	if err != nil || !found {
		return viewOf(r, err)
	}
	var h providers.HeldAuthorization
	if set.op == opCapture {
		h, err = st.CaptureHold(ctx, r.payment(), set.amount)
	} else {
		h, err = st.VoidHold(ctx, r.payment())
	}
	if errors.Is(err, providers.ErrNoAnswer) {
		return r.view(), settlementUnknown(r, set, err)
	}
	if err != nil || h.Status == providers.Held {
		// Refused, or not reached: where does the authorisation stand?
		looked, found, lerr := st.LookupHold(ctx, r.payment())
		if lerr != nil || !found || looked.Status == providers.Held {
			return r.view(), s.settlementRefused(ctx, work, r, set, err, lerr == nil && found)
		}
		h = looked
	}
	out, err := s.recordSettlement(ctx, work, id, h)
	if err != nil {
		return Intent{}, err
	}
	return out.view(), nil
}

// settlementUnknown is the 504 of a capture or void whose answer was lost.
func settlementUnknown(r *record, set settlement, cause error) error {
	msg := "the card gateway did not answer the capture in time; the payment intent stays requires_capture until a retry of this request or reconciliation learns the outcome, which is recorded once"
	if set.op == opVoid {
		msg = "the card gateway did not answer the release of the authorisation in time; the payment intent is canceled once a retry of this request or reconciliation learns the outcome"
	}
	return &errs.Error{Kind: errs.KindProviderTimeout, Code: "provider_timeout", Message: msg, Err: cause,
		Extra: map[string]any{"payment_intent": r.ID}}
}

// settlementRefused answers a capture or void the gateway refused or did
// not get. A refused capture of an authorisation that is still held
// (stillHeld) is dropped: nothing was captured and the intent stays
// requires_capture. Any other stays for reconciliation to send again.
func (s *Service) settlementRefused(ctx context.Context, work store.Work, r *record, set settlement, cause error, stillHeld bool) error {
	extra := map[string]any{"payment_intent": r.ID}
	if set.op == opCapture && stillHeld {
		if _, err := work.Exec(ctx, "DELETE FROM payment_intent_settlements WHERE payment_intent_id = ? AND operation = ?", r.ID, opCapture); err != nil {
			return err
		}
		return &errs.Error{Kind: errs.KindProvider, Code: "provider_error", Err: cause, Extra: extra,
			Message: "the card gateway did not capture the authorisation; nothing was captured and the payment intent stays requires_capture"}
	}
	msg := "the card gateway could not be asked to capture; the payment intent stays requires_capture and reconciliation sends the capture again"
	if set.op == opVoid {
		msg = "the card gateway did not release the authorisation yet; the payment intent stays requires_capture and reconciliation sends the release again until it is done"
	}
	return &errs.Error{Kind: errs.KindProvider, Code: "provider_error", Err: cause, Extra: extra, Message: msg}
}

// errSettled: the settlement was recorded by someone else meanwhile.
var errSettled = errors.New("payments: the settlement was recorded meanwhile")

// recordSettlement records the gateway's answer on intent id (Captured or
// Released) in one transaction with the deletion of its settlement, which
// makes it happen once whoever else records it.
func (s *Service) recordSettlement(ctx context.Context, work store.Work, id string, h providers.HeldAuthorization) (*record, error) {
	for range maxRaces {
		r, err := loadByID(ctx, work, id)
		if err != nil {
			return nil, err
		}
		if r.Status != RequiresCapture {
			return r, nil
		}
		var out record
		err = work.InTx(ctx, func(tx *store.Tx) error {
			set, found, err := readSettlement(ctx, tx, id)
			if err != nil {
				return err
			}
			if !found {
				return errSettled
			}
			res, err := tx.Exec(ctx, "DELETE FROM payment_intent_settlements WHERE payment_intent_id = ? AND operation = ?", id, set.op)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return errSettled
			}
			out = *r
			now := tx.Now()
			out.updatedAt, out.AmountCapturableMinor, out.NextAction = now, 0, nil
			t := capture
			switch h.Status {
			case providers.Captured:
				if h.CapturedMinor <= 0 || h.CapturedMinor > r.AmountCapturableMinor {
					return fmt.Errorf("payments: the card gateway captured %d of the %d held on %s", h.CapturedMinor, r.AmountCapturableMinor, id)
				}
				out.Status, out.AmountCapturedMinor, out.SucceededAt = Succeeded, h.CapturedMinor, &now
			case providers.Released:
				reason := set.reason
				if set.op == opCapture {
					// Released by the gateway itself (its own capture
					// window) before the capture reached it.
					abandoned := ReasonAbandoned
					reason = &abandoned
				}
				out.Status, out.CanceledAt, out.CancellationReason = Canceled, &now, reason
				t = cancelRequested
			default:
				return fmt.Errorf("payments: a held authorisation's answer must be captured or released, not %d", h.Status)
			}
			if err := move(ctx, tx, &out, t); err != nil {
				return err
			}
			return s.effects(ctx, tx, &out, t, providers.Result{})
		})
		switch {
		case errors.Is(err, errLostRace):
			continue
		case errors.Is(err, errSettled):
			return loadByID(ctx, work, id)
		case err != nil:
			return nil, err
		}
		return &out, nil
	}
	return nil, errs.InvalidState("the payment intent kept changing while the card gateway's answer was recorded; it is reconciled later")
}

// readSettlement reads intent id's settlement in flight, if any.
func readSettlement(ctx context.Context, q store.Querier, id string) (settlement, bool, error) {
	var set settlement
	var reason sql.NullString
	err := q.QueryRow(ctx, "SELECT operation, amount_minor, cancellation_reason FROM payment_intent_settlements WHERE payment_intent_id = ?", id).
		Scan(&set.op, &set.amount, &reason)
	if store.IsNotFound(err) {
		return settlement{}, false, nil
	}
	set.reason = store.NullString(reason)
	return set, err == nil, err
}

// OpenSettlement is a live intent whose capture or void was sent to the
// card gateway without its answer being recorded.
type OpenSettlement struct {
	ID         string
	MerchantID string
	UpdatedAt  time.Time
}

// openSettlementBatch bounds the settlements one reconciliation run reads.
const openSettlementBatch = 500

// OpenSettlements lists the settlements in flight that last changed before
// olderThan, oldest first.
func (s *Service) OpenSettlements(ctx context.Context, olderThan time.Time) ([]OpenSettlement, error) {
	rows, err := s.db.Query(ctx, `SELECT payment_intent_id, merchant_id, updated_at FROM payment_intent_settlements
		WHERE updated_at < ? ORDER BY updated_at LIMIT ?`, store.Micros(olderThan), openSettlementBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OpenSettlement
	for rows.Next() {
		var o OpenSettlement
		var updated int64
		if err := rows.Scan(&o.ID, &o.MerchantID, &updated); err != nil {
			return nil, err
		}
		o.UpdatedAt = store.FromMicros(updated)
		out = append(out, o)
	}
	return out, rows.Err()
}

// ReconcileSettlement settles intent id's capture or void in flight: it
// asks the gateway where the authorisation stands (changing nothing) and
// records a capture or release it finds; an authorisation still held never
// got the call, which is sent again under the same key. Neither can do
// anything twice, even while the request that started the settlement
// resumes at the same time: the gateway answers a key once, and the
// settlement row is deleted once. It returns the intent's status afterwards.
// A settlement it could not finish (the gateway not asked, or refusing) is
// asked about again next run; its row's updated_at moves so that the
// others in flight come first, and rows that keep failing cannot hold
// every place of a run's batch.
func (s *Service) ReconcileSettlement(ctx context.Context, id string) (Status, error) {
	r, err := loadByID(ctx, s.db, id)
	if err != nil {
		return "", err
	}
	status, err := s.reconcileSettlement(ctx, r)
	if err != nil {
		if _, uerr := s.db.Exec(ctx, "UPDATE payment_intent_settlements SET updated_at = ? WHERE payment_intent_id = ?",
			store.Micros(s.db.Now()), id); uerr != nil {
			return r.Status, uerr
		}
	}
	return status, err
}

func (s *Service) reconcileSettlement(ctx context.Context, r *record) (Status, error) {
	st, err := s.holdSettler(ctx, s.db, r)
	if err != nil || st == nil {
		return r.Status, err
	}
	h, found, err := st.LookupHold(ctx, r.payment())
	if err != nil {
		return r.Status, err
	}
	if found && h.Status != providers.Held {
		out, err := s.recordSettlement(ctx, s.db.Within(store.NoClaim), r.ID, h)
		if err != nil {
			return r.Status, err
		}
		return out.Status, nil
	}
	out, err := s.sendSettlement(ctx, s.db.Within(store.NoClaim), st, r.ID)
	if err != nil {
		return r.Status, err
	}
	return out.Status, nil
}
