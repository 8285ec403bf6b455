package banking

import (
	"context"
	"encoding/json"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/store"
)

// SettleJobKind is the job kind the wiring registers HandleSettleJob under.
const SettleJobKind = settleJobKind

// HandleSettleJob settles the ACSP transfer named in the job. It is
// idempotent (jobs run at least once): a transfer that is no longer ACSP,
// or no longer exists, is left alone.
func (s *Service) HandleSettleJob(ctx context.Context, job jobs.Job) error {
	var p settlePayload
	if err := json.Unmarshal(job.Payload, &p); err != nil || p.TransferID == "" {
		s.log.Error("transfer_settle job with an unreadable payload", "job_id", job.ID)
		return nil
	}
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		t, err := getTransferByID(ctx, tx, p.TransferID)
		if store.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if t.Status != StatusACSP {
			return nil
		}
		return settleInFlight(ctx, tx, t)
	})
	if errs.IsCode(err, "invalid_state") {
		return nil // another runner settled it first
	}
	return err
}

// settleInFlight moves an ACSP transfer to ACSC: the status, the posting
// from the debtor's settlement clearing to the creditor, and the event, in
// one transaction.
func settleInFlight(ctx context.Context, tx *store.Tx, t *Transfer) error {
	now := tx.Now()
	if err := transitionSettle.apply(ctx, tx, t, transitionUpdate{settledAt: &now}); err != nil {
		return err
	}
	if err := postSettleInFlight(ctx, tx, t); err != nil {
		return err
	}
	return emit(ctx, tx, t, EventSettled)
}
