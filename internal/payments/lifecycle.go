package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// The end of an intent's life that the merchant (or time) decides: cancel,
// capture of a held card authorisation, and the expiry of intents nobody
// finished. Each is one compare-and-set transition written with its event
// (and, for a capture, its ledger credit) in one transaction, so a cancel
// racing a confirm, a hosted page, a provider's report or another cancel
// has exactly one winner; the loser re-reads the intent and answers 409
// invalid_state naming the status it found.

// cancellable reports whether a cancel may move an intent in status s.
func cancellable(s Status) bool { return s == RequiresAction || s == RequiresCapture }

// Cancel cancels one of the principal's intents that waits for the
// customer (requires_action) or for its capture (requires_capture; the held
// authorisation is released: nothing was credited, so nothing is posted).
// reason is nil or one of the cancellation reasons (else 400
// cancellation_reason). Any other status is 409 invalid_state and changes
// nothing. payment_intent.canceled is emitted once. cl is the request's
// idempotency claim (store.NoClaim without one): the release of a live held
// authorisation commits a recovery point on it before the gateway's call.
func (s *Service) Cancel(ctx context.Context, cl store.Claim, p auth.Principal, id string, reason *string) (Intent, error) {
	work := s.db.Within(cl)
	reason, err := ParseCancellationReason(reason)
	if err != nil {
		return Intent{}, err
	}
	if rp, ok := cl.Resuming(); ok && rp.Point == pointSettle && rp.Ref == id {
		return s.resumeSettlement(ctx, cl, p.MerchantID, p.Livemode, id)
	}
	for range maxRaces {
		r, err := load(ctx, work, p.MerchantID, p.Livemode, id)
		if err != nil {
			return Intent{}, err
		}
		if !cancellable(r.Status) {
			return Intent{}, notCancellable(r)
		}
		st, err := s.holdSettler(ctx, work, r)
		if err != nil {
			return Intent{}, err
		}
		if st != nil {
			// A live held authorisation: released at the card gateway
			// first, canceled as the void's answer allows (settle.go).
			out, err := s.startSettlement(ctx, cl, st, r, settlement{op: opVoid, reason: reason})
			if errors.Is(err, errLostRace) {
				continue
			}
			return out, err
		}
		out, err := s.cancelRequested(ctx, work, r, reason)
		if errors.Is(err, errLostRace) {
			continue // moved meanwhile: decide again on what is there now
		}
		if err != nil {
			return Intent{}, err
		}
		return out.view(), nil
	}
	return Intent{}, errs.InvalidState("the payment intent kept changing while this request ran; retrieve it and try again")
}

func notCancellable(r *record) error {
	e := errs.InvalidState("payment intent %s is %s; only a payment intent that is requires_action or requires_capture can be canceled", r.ID, r.Status)
	e.Extra = map[string]any{"payment_intent": r.ID}
	return e
}

// cancelRequested writes the cancel of r, read at its version: errLostRace
// when another request moved it first.
func (s *Service) cancelRequested(ctx context.Context, work store.Work, r *record, reason *string) (*record, error) {
	var out record
	err := work.InTx(ctx, func(tx *store.Tx) error {
		out = *r
		now := tx.Now()
		out.Status, out.CanceledAt, out.CancellationReason, out.updatedAt = Canceled, &now, reason, now
		out.NextAction, out.AmountCapturableMinor = nil, 0
		if err := move(ctx, tx, &out, cancelRequested); err != nil {
			return err
		}
		return s.effects(ctx, tx, &out, cancelRequested, providers.Result{})
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Capture captures a held card authorisation (requires_capture): amount
// (nil: everything capturable) becomes amount_captured_minor, is credited
// to the merchant's available balance exactly like an automatic success
// (the same posting and payment_intent.succeeded), and the rest of the
// authorisation is released. An amount above what is capturable is 400
// amount_exceeds_capturable, zero or less 400 amount_invalid, both naming
// amount_to_capture_minor; an intent in any other status is 409
// invalid_state. Nothing changes on a refusal. cl is the request's
// idempotency claim (store.NoClaim without one), as for Cancel.
func (s *Service) Capture(ctx context.Context, cl store.Claim, p auth.Principal, id string, amount *int64) (Intent, error) {
	work := s.db.Within(cl)
	if amount != nil && *amount <= 0 {
		return Intent{}, errs.Invalid("amount_to_capture_minor", "amount_invalid", "amount_to_capture_minor must be a positive integer")
	}
	if rp, ok := cl.Resuming(); ok && rp.Point == pointSettle && rp.Ref == id {
		return s.resumeSettlement(ctx, cl, p.MerchantID, p.Livemode, id)
	}
	for range maxRaces {
		r, err := load(ctx, work, p.MerchantID, p.Livemode, id)
		if err != nil {
			return Intent{}, err
		}
		if r.Status != RequiresCapture {
			e := errs.InvalidState("payment intent %s is %s; only a requires_capture payment intent can be captured", r.ID, r.Status)
			e.Extra = map[string]any{"payment_intent": r.ID}
			return Intent{}, e
		}
		captured := r.AmountCapturableMinor
		if amount != nil {
			if *amount > captured {
				return Intent{}, errs.Invalid("amount_to_capture_minor", "amount_exceeds_capturable",
					"amount_to_capture_minor %d is more than the %d this payment intent can capture", *amount, captured)
			}
			captured = *amount
		}
		st, err := s.holdSettler(ctx, work, r)
		if err != nil {
			return Intent{}, err
		}
		if st != nil {
			// A live held authorisation: captured at the card gateway
			// first, credited once the capture is confirmed (settle.go).
			out, err := s.startSettlement(ctx, cl, st, r, settlement{op: opCapture, amount: captured})
			if errors.Is(err, errLostRace) {
				continue
			}
			return out, err
		}
		var out record
		err = work.InTx(ctx, func(tx *store.Tx) error {
			out = *r
			now := tx.Now()
			out.Status, out.AmountCapturedMinor, out.AmountCapturableMinor = Succeeded, captured, 0
			out.SucceededAt, out.updatedAt = &now, now
			if err := move(ctx, tx, &out, capture); err != nil {
				return err
			}
			return s.effects(ctx, tx, &out, capture, providers.Result{})
		})
		if errors.Is(err, errLostRace) {
			continue
		}
		if err != nil {
			return Intent{}, err
		}
		return out.view(), nil
	}
	return Intent{}, errs.InvalidState("the payment intent kept changing while this request ran; retrieve it and try again")
}

// ExpiryJob is the periodic job that cancels abandoned intents (Expire).
const ExpiryJob = "payment_intent.expire"

// ExpiryInterval is how often ExpiryJob runs.
const ExpiryInterval = time.Minute

// Expiry says when intents nobody finished are cancelled.
type Expiry struct {
	// Action: an intent still requires_action this long after its
	// creation is cancelled (PAYD_INTENT_EXPIRY; 0 never).
	Action time.Duration
	// Capture: a held authorisation still requires_capture this long
	// after it was authorised is released (PAYD_CAPTURE_WINDOW; 0 never).
	Capture time.Duration
}

// ExpiryBatch is how many intents one read of the expiry job lists; each is
// then cancelled in a transaction of its own.
var ExpiryBatch = 200

// maxExpiredPerRun bounds one run of the job, so it ends well within its
// lease however many intents are due; the next run goes on.
const maxExpiredPerRun = 20_000

// RunExpiryJob handles ExpiryJob.
func (s *Service) RunExpiryJob(ctx context.Context, _ jobs.Job) error {
	_, err := s.Expire(ctx)
	return err
}

// Expire cancels, with cancellation_reason abandoned, every intent still
// requires_action Expiry.Action after its creation and every authorisation
// still requires_capture Expiry.Capture after it was authorised, as the
// database clock (store.DB.Now) tells time. It returns how many it
// cancelled. Each is a compare-and-set, so an intent completed, captured or
// cancelled meanwhile is left as it is, and two runs (two processes) cancel
// each intent once. It reads only the intents due, in batches, through the
// partial indexes of migration 2100 (payment_intents_awaiting_action,
// payment_intents_awaiting_capture): its cost follows the number expiring,
// not the size of the table.
func (s *Service) Expire(ctx context.Context) (int, error) {
	now := s.db.Now()
	done := 0
	for _, due := range []struct {
		status Status
		column string
		after  time.Duration
	}{
		{RequiresAction, "created_at", s.expiry.Action},
		{RequiresCapture, "updated_at", s.expiry.Capture},
	} {
		if due.after <= 0 {
			continue
		}
		n, err := s.expireDue(ctx, due.status, due.column, now.Add(-due.after), maxExpiredPerRun-done)
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// expireDue cancels up to limit intents in status whose column is at or
// before cutoff, oldest first, walking the partial index by (column, id)
// so an intent it could not cancel is never read twice.
func (s *Service) expireDue(ctx context.Context, status Status, column string, cutoff time.Time, limit int) (int, error) {
	done := 0
	afterAt, afterID := int64(-1), ""
	abandoned := ReasonAbandoned
	for done < limit {
		// The status is written into the query, not bound: neither engine
		// uses a partial index whose predicate a parameter would have to
		// prove (a PostgreSQL generic plan, any SQLite plan), and without
		// it this read would scan the table.
		rows, err := s.db.Query(ctx, fmt.Sprintf(`SELECT id, %[1]s FROM payment_intents
			WHERE status = '%[2]s' AND %[1]s <= ? AND (%[1]s > ? OR (%[1]s = ? AND id > ?))
			ORDER BY %[1]s, id LIMIT ?`, column, status), store.Micros(cutoff), afterAt, afterAt, afterID, ExpiryBatch)
		if err != nil {
			return done, err
		}
		var due []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id, &afterAt); err != nil {
				rows.Close()
				return done, err
			}
			due, afterID = append(due, id), id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return done, err
		}
		for _, id := range due {
			r, err := loadByID(ctx, s.db, id)
			if err != nil {
				if errs.As(err) != nil && errs.As(err).Kind == errs.KindNotFound {
					continue // purged meanwhile
				}
				return done, err
			}
			if r.Status != status || expiryTime(r, status).After(cutoff) {
				continue // finished or moved since it was listed
			}
			canceled, err := s.expireOne(ctx, r, &abandoned)
			if errors.Is(err, errLostRace) {
				continue // another run, or its customer, moved it first
			}
			if err != nil {
				return done, err
			}
			if canceled {
				done++
			}
		}
		if len(due) < ExpiryBatch {
			break
		}
	}
	return done, nil
}

// expireOne cancels r (abandoned). A live held authorisation is released
// at its card gateway first (settle.go); when the gateway refuses or does
// not answer, the release stays in flight and reconciliation finishes it,
// and the run goes on with the next intent (canceled false).
func (s *Service) expireOne(ctx context.Context, r *record, reason *string) (canceled bool, err error) {
	st, err := s.holdSettler(ctx, s.db, r)
	if err == nil && st != nil {
		var out Intent
		out, err = s.startSettlement(ctx, store.NoClaim, st, r, settlement{op: opVoid, reason: reason})
		if err == nil || errors.Is(err, errLostRace) {
			return err == nil && out.Status == Canceled, err
		}
	}
	if err != nil {
		s.log.Warn("expiry: the held authorisation is not released yet", "payment_intent", r.ID, "err", err)
		return false, nil
	}
	_, err = s.cancelRequested(ctx, s.db.Within(store.NoClaim), r, reason)
	return err == nil, err
}

// expiryTime is when an intent in status began waiting: its creation for
// requires_action, its authorisation (the transition that made it
// requires_capture, the last to touch it) for requires_capture.
func expiryTime(r *record, status Status) time.Time {
	if status == RequiresCapture {
		return r.updatedAt
	}
	return r.CreatedAt
}
