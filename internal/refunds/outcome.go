package refunds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// A refund's outcome is recorded exactly once however many answers arrive
// (the provider's reply, a poll job, a signed callback, reconciliation):
// each is the compare-and-set succeed or fail from pending, and only the
// first finds the refund still pending. The posting, the intent's sums and
// the event are written in that same transaction.

// request is the refund as its provider is told about it.
func request(r *Refund, t payments.RefundTarget) providers.RefundRequest {
	return providers.RefundRequest{IdempotencyKey: r.ID, Provider: r.Provider, PaymentIntent: r.PaymentIntent, PaymentRef: t.ProviderRef,
		Amount: r.AmountMinor, Currency: r.Currency, CustomerMSISDN: t.CustomerMSISDN, CardPresent: t.CardPresent, Scenario: r.Scenario, CreatedAt: r.CreatedAt}
}

// applyResult sets r to the state a provider's answer leads to and returns
// the transition that gets it there (nil while the answer is pending).
func applyResult(r *Refund, res providers.RefundResult, now time.Time) *transition {
	if res.ProviderReference != "" {
		r.ProviderRef = res.ProviderReference
	}
	r.UpdatedAt = now
	switch res.Outcome {
	case providers.RefundSucceeded:
		r.Status, r.SucceededAt = Succeeded, &now
		return &succeed
	case providers.RefundFailed:
		f := res.Failure
		if f == nil {
			f = &providers.Failure{Code: "provider_declined", Message: "the provider declined the refund"}
		}
		r.Status, r.FailedAt, r.FailureCode, r.FailureMessage = Failed, &now, strPtr(f.Code), strPtr(f.Message)
		return &fail
	}
	return nil
}

// effects writes what accompanies a refund's creation (created) and a move
// t (nil for none) in their transaction: the events, the intent's refund
// sums, the postings (last), and the next poll of a refund whose answer is
// expected later.
func (s *Service) effects(ctx context.Context, tx *store.Tx, r *Refund, created bool, t *transition, res providers.RefundResult) error {
	if created {
		if err := emit(ctx, tx, r, EventCreated); err != nil {
			return err
		}
	}
	outcome := ""
	if t != nil {
		if err := emit(ctx, tx, r, t.Event()); err != nil {
			return err
		}
		switch t.To {
		case Succeeded:
			outcome = KindRefundSettlement
			if err := payments.SettleRefund(ctx, tx, r.PaymentIntent, r.AmountMinor); err != nil {
				return err
			}
		case Failed, Canceled:
			outcome = KindRefundFailure
			if err := payments.ReleaseRefund(ctx, tx, r.PaymentIntent, r.AmountMinor); err != nil {
				return err
			}
		}
	} else if r.Status == Pending && res.PollAfter > 0 {
		if err := s.schedulePoll(ctx, tx, r.ID, tx.Now().Add(res.PollAfter)); err != nil {
			return err
		}
	}
	if !created && outcome == "" {
		return nil
	}
	return post(ctx, tx, r, created, outcome)
}

// sendLocal asks an in-process adapter (the sandbox) for its answer before
// anything is written, so the refund's change and its outcome commit in one
// transaction; a remote adapter is not called here (nil, nil): it is called
// by sendRemote after the refund is recorded.
func sendLocal(ctx context.Context, a providers.RefundAdapter, r *Refund, t payments.RefundTarget) (*providers.RefundResult, error) {
	if a.Remote() {
		return nil, nil
	}
	res, err := a.SendRefund(ctx, request(r, t))
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// pointSend is the recovery point of a request that sends a refund to a
// remote provider (create, approve): the pending refund, its reserve and
// its claim committed, about to be sent.
const pointSend = "refund.send"

// sendRemote sends a pending refund to a provider outside any transaction
// and records the answer. No answer (an error or a timeout) leaves it
// pending for reconciliation; the refund is returned as it then stands.
//
// Before the call it commits the request's writes with a recovery point on
// the request's Idempotency-Key: inside a keyed request they would otherwise
// commit only with the answer, and a crash during the call would lose a
// refund the provider may have paid. A retry after such a crash resumes at
// the point (resumed) instead of making a second refund.
func (s *Service) sendRemote(ctx context.Context, cl store.Claim, a providers.RefundAdapter, r *Refund, t payments.RefundTarget) (*Refund, error) {
	if err := cl.RecoveryPoint(ctx, pointSend, r.ID); err != nil {
		return nil, err
	}
	res, err := a.SendRefund(ctx, request(r, t))
	if err != nil {
		s.log.Warn("refund sent without an answer; reconciliation will ask again", "refund", r.ID, "provider", r.Provider, "err", err)
		return r.view(), nil
	}
	out, err := s.record(ctx, s.db.Within(cl), r.ID, res)
	if err != nil {
		return nil, err
	}
	return out.view(), nil
}

// record writes a provider's answer on the refund if it is still pending,
// and returns the refund as it then stands.
func (s *Service) record(ctx context.Context, work store.Work, id string, res providers.RefundResult) (*Refund, error) {
	var out *Refund
	err := work.InTx(ctx, func(tx *store.Tx) error {
		r, err := getByID(ctx, tx, id)
		if err != nil {
			return err
		}
		out = r
		if r.Status != Pending {
			return nil // settled already
		}
		t := applyResult(r, res, tx.Now())
		if t != nil {
			if err := move(ctx, tx, r, *t); err != nil {
				return err
			}
		}
		return s.effects(ctx, tx, r, false, t, res)
	})
	if errors.Is(err, errLostRace) {
		// Another answer settled it between the read and the write.
		return getByID(ctx, work, id)
	}
	return out, err
}

// PollJob is the job kind that asks a provider where a pending refund
// stands when it said when to ask (the sandbox's network_timeout answers
// PAYD_SANDBOX_PUSH_DELAY after creation).
const PollJob = "refund.poll"

type pollPayload struct {
	RefundID string `json:"refund"`
}

// schedulePoll queues the next status query of a refund in tx.
func (s *Service) schedulePoll(ctx context.Context, tx *store.Tx, id string, at time.Time) error {
	if err := jobs.Enqueue(ctx, tx, PollJob, pollPayload{RefundID: id}, at, ""); err != nil {
		return err
	}
	tx.AfterCommit(s.wake)
	return nil
}

// RunPollJob handles PollJob. It is idempotent (jobs run at least once): a
// refund no longer pending is left alone, and racing runs settle it once.
func (s *Service) RunPollJob(ctx context.Context, job jobs.Job) error {
	var pl pollPayload
	if err := json.Unmarshal(job.Payload, &pl); err != nil || pl.RefundID == "" {
		return fmt.Errorf("refunds: poll job %s has a bad payload", job.ID)
	}
	r, err := getByID(ctx, s.db, pl.RefundID)
	if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
		return nil // purged
	}
	if err != nil {
		return err
	}
	return s.ask(ctx, r, false)
}

// ask queries the provider about a pending refund and records the answer;
// resend sends it again (under the same idempotency key) when the provider
// still has no answer, in case it never received it.
func (s *Service) ask(ctx context.Context, r *Refund, resend bool) error {
	if r.Status != Pending {
		return nil
	}
	t, err := payments.RefundTargetOf(ctx, s.db, r.MerchantID, r.Livemode, r.PaymentIntent)
	if err != nil {
		return err
	}
	a, err := s.adapter(ctx, s.db, r.MerchantID, r.Livemode, r.Provider)
	if err != nil {
		return err
	}
	res, err := a.RefundStatus(ctx, request(r, t))
	if err == nil && res.Outcome == providers.RefundPending && resend {
		res, err = a.SendRefund(ctx, request(r, t))
	}
	if err != nil {
		return err
	}
	_, err = s.record(ctx, s.db.Within(store.NoClaim), r.ID, res)
	return err
}

// resumed answers a request whose earlier run sent a refund and ended
// without an answer (see sendRemote): the refund as it is now, which
// reconciliation settles once the provider tells.
func (s *Service) resumed(ctx context.Context, cl store.Claim, pr auth.Principal) (*Refund, bool, error) {
	rp, ok := cl.Resuming()
	if !ok || rp.Point != pointSend {
		return nil, false, nil
	}
	r, err := get(ctx, s.db.Within(cl), pr.MerchantID, pr.Livemode, rp.Ref)
	if err != nil {
		return nil, true, err
	}
	return r.view(), true, nil
}
