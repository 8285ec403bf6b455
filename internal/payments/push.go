package payments

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// PollJob is the job kind that asks a provider where a push approval stands;
// the sandbox approves PAYD_SANDBOX_PUSH_DELAY after creation unless the
// scenario in force says otherwise.
const PollJob = "payment_intent.poll"

type pollPayload struct {
	IntentID string `json:"payment_intent"`
}

// schedulePoll queues the next status query of an intent in tx.
func (s *Service) schedulePoll(ctx context.Context, tx *store.Tx, id string, at time.Time) error {
	if err := jobs.Enqueue(ctx, tx, PollJob, pollPayload{IntentID: id}, at, ""); err != nil {
		return err
	}
	tx.AfterCommit(s.wake)
	return nil
}

// RunPollJob handles PollJob: it queries the provider and records the
// answer. It is idempotent (at-least-once jobs): an intent that no longer
// waits for an approval is left alone, and racing runs settle it once.
func (s *Service) RunPollJob(ctx context.Context, job jobs.Job) error {
	var pl pollPayload
	if err := json.Unmarshal(job.Payload, &pl); err != nil || pl.IntentID == "" {
		return fmt.Errorf("payments: poll job %s has a bad payload", job.ID)
	}
	_, _, err := s.step(ctx, store.NoClaim,
		func() (*record, error) { return loadByID(ctx, s.db, pl.IntentID) },
		func(r *record) error {
			if r.Status != RequiresAction || r.NextAction == nil || r.NextAction.Type != providers.ActionPushApproval {
				return errNothingToDo
			}
			return nil
		},
		func(a providers.PaymentAdapter, pay providers.Payment) (providers.Result, error) {
			return a.Status(ctx, pay)
		})
	if err == errNothingToDo || store.IsNotFound(err) || errs.As(err) != nil && errs.As(err).Kind == errs.KindNotFound {
		return nil // settled already, or purged
	}
	return err
}
