package disputes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// The sandbox's magic evidence: a submitted uncategorized_text of exactly
// one of these decides a test-mode dispute PushDelay after submitting; any
// other text leaves it under_review.
const (
	WinningEvidence = "winning_evidence"
	LosingEvidence  = "losing_evidence"
)

// OutcomeJob is the job kind that decides a test-mode dispute whose
// submitted evidence was magic.
const OutcomeJob = "dispute.sandbox_outcome"

type outcomePayload struct {
	DisputeID string `json:"dispute"`
	Outcome   Status `json:"outcome"`
}

// sandboxOutcome is the decision the magic evidence of d asks for ("" none).
func sandboxOutcome(d *Dispute) Status {
	if d.Evidence.UncategorizedText == nil {
		return ""
	}
	switch *d.Evidence.UncategorizedText {
	case WinningEvidence:
		return Won
	case LosingEvidence:
		return Lost
	}
	return ""
}

// scheduleSandboxOutcome queues, in tx, the decision that a test-mode
// dispute's magic evidence asks for.
func (s *Service) scheduleSandboxOutcome(ctx context.Context, tx *store.Tx, d *Dispute) error {
	outcome := sandboxOutcome(d)
	if outcome == "" {
		return nil
	}
	if err := jobs.Enqueue(ctx, tx, OutcomeJob, outcomePayload{DisputeID: d.ID, Outcome: outcome}, tx.Now().Add(s.pushDelay), ""); err != nil {
		return err
	}
	tx.AfterCommit(s.wake)
	return nil
}

// RunOutcomeJob handles OutcomeJob. It is idempotent (jobs run at least
// once): a dispute closed already is left alone.
func (s *Service) RunOutcomeJob(ctx context.Context, job jobs.Job) error {
	var pl outcomePayload
	if err := json.Unmarshal(job.Payload, &pl); err != nil || pl.DisputeID == "" || (pl.Outcome != Won && pl.Outcome != Lost) {
		return fmt.Errorf("disputes: outcome job %s has a bad payload", job.ID)
	}
	_, err := s.decide(ctx, s.db.Within(store.NoClaim), pl.DisputeID, pl.Outcome)
	if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
		return nil // purged
	}
	return err
}

// RunSandboxCardJob handles payments.SandboxDisputeJob: the payment made with
// the sandbox's disputed test card is disputed (fraudulent). It is
// idempotent: an intent disputed already (a rerun), refunded in full
// meanwhile, or purged is left alone.
func (s *Service) RunSandboxCardJob(ctx context.Context, job jobs.Job) error {
	var pl payments.SandboxDisputePayload
	if err := json.Unmarshal(job.Payload, &pl); err != nil || pl.PaymentIntent == "" {
		return fmt.Errorf("disputes: sandbox card job %s has a bad payload", job.ID)
	}
	work := s.db.Within(store.NoClaim) // a job: no request's unit
	t, err := payments.DisputeTargetByID(ctx, work, pl.PaymentIntent)
	if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.open(ctx, work, opening{target: t, reason: "fraudulent", sandbox: true})
	if errors.Is(err, errAlreadyDisputed) {
		return nil
	}
	if e := errs.As(err); e != nil && e.Code == "invalid_state" {
		s.log.Info("sandbox dispute not opened", "payment_intent", t.IntentID, "reason", e.Message)
		return nil
	}
	return err
}
