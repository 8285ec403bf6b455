package refunds

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// Config is what the service needs.
type Config struct {
	DB     *store.DB
	Rails  *providers.RefundRails
	Logger *slog.Logger
	// WakeJobs wakes the job runner after a poll job is queued (optional).
	WakeJobs func()
}

// Service creates, approves, cancels and settles refunds.
type Service struct {
	db    *store.DB
	rails *providers.RefundRails
	log   *slog.Logger
	wake  func()
}

// New makes the service.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.WakeJobs == nil {
		cfg.WakeJobs = func() {}
	}
	return &Service{db: cfg.DB, rails: cfg.Rails, log: cfg.Logger, wake: cfg.WakeJobs}
}

// errLostRace means another request moved the refund first.
var errLostRace = errors.New("refunds: the refund changed under this request")

// CreateParams is the body of POST /v1/refunds.
type CreateParams struct {
	PaymentIntent string            `json:"payment_intent"`
	AmountMinor   *int64            `json:"amount_minor"` // nil: whatever is still refundable
	Reason        *string           `json:"reason"`
	Metadata      map[string]string `json:"metadata"`
	// Scenario is the X-Service-Scenario header (test mode).
	Scenario string `json:"-"`
}

func (in *CreateParams) validate() error {
	switch {
	case in.PaymentIntent == "":
		return errs.Missing("payment_intent")
	case in.AmountMinor != nil && *in.AmountMinor <= 0:
		return errs.Invalid("amount_minor", "amount_invalid", "amount_minor must be a positive integer")
	case in.Reason != nil && !slices.Contains(Reasons, *in.Reason):
		return errs.Invalid("reason", "parameter_invalid", "reason must be one of %s", strings.Join(Reasons, ", "))
	}
	return payments.ValidateMetadata(in.Metadata)
}

// Create refunds part or all of a succeeded payment intent. The amount
// moves from available to reserved in the refund's transaction (402
// insufficient_balance when available is short; nothing is written). Over
// the merchant's approval threshold the refund waits in requires_approval
// for a second principal; otherwise it is sent to the intent's provider at
// once and answered as the provider left it (succeeded, failed, or pending
// until the provider's answer arrives). cl is the request's idempotency
// claim (store.NoClaim without one): a remote provider's call commits a
// recovery point on it first.
func (s *Service) Create(ctx context.Context, cl store.Claim, pr auth.Principal, in CreateParams) (*Refund, error) {
	work := s.db.Within(cl)
	if err := in.validate(); err != nil {
		return nil, err
	}
	if r, ok, err := s.resumed(ctx, cl, pr); ok {
		return r, err
	}
	target, err := payments.RefundTargetOf(ctx, work, pr.MerchantID, pr.Livemode, in.PaymentIntent)
	if err != nil {
		return nil, intentError(err)
	}
	adapter, err := s.adapter(ctx, work, pr.MerchantID, pr.Livemode, target.Provider)
	if err != nil {
		return nil, err
	}
	scenario := ""
	if sel, ok := adapter.(providers.RefundScenarioSelector); ok {
		if scenario, err = sel.SelectRefundScenario(in.Scenario); err != nil {
			return nil, err
		}
	}
	amount := target.Refundable
	if in.AmountMinor != nil {
		amount = *in.AmountMinor
	}
	if err := checkAmount(target, amount); err != nil {
		return nil, err
	}
	controls, err := merchants.ApprovalControls(ctx, work, pr.MerchantID, pr.Livemode)
	if err != nil {
		return nil, err
	}
	threshold := controls.Threshold
	now := s.db.Now()
	r := &Refund{ID: ids.New("re_"), Object: "refund", PaymentIntent: target.IntentID, AmountMinor: amount, Currency: target.Currency,
		Status: Pending, Reason: in.Reason, Metadata: in.Metadata, Livemode: pr.Livemode, CreatedAt: now, UpdatedAt: now,
		MerchantID: pr.MerchantID, Provider: target.Provider, CreatedBy: pr.ID, Scenario: scenario}
	if r.Metadata == nil {
		r.Metadata = map[string]string{}
	}
	if threshold != nil && amount > *threshold {
		r.Status = RequiresApproval
	} else if threshold != nil {
		// A first look at the cumulative rule, to avoid sending a refund
		// that will wait; the decision is taken again under the lock below.
		earlier, err := recentByPrincipal(ctx, work, r.MerchantID, r.Livemode, r.CreatedBy, now.Add(-controls.Window))
		if err != nil {
			return nil, err
		}
		if controls.Over(earlier, amount) {
			r.Status = RequiresApproval
		}
	}
	var res *providers.RefundResult
	if r.Status == Pending {
		if res, err = sendLocal(ctx, adapter, r, target); err != nil {
			return nil, err
		}
	}
	// From here the refund is about to exist: finish even if the client goes away.
	ctx = context.WithoutCancel(ctx)
	var out Refund
	err = work.InTx(ctx, func(tx *store.Tx) error {
		out = *r
		out.UpdatedAt = tx.Now()
		// Cumulative four-eyes, decided while holding the merchant's
		// settings row: a concurrent refund by the same principal waits
		// here and then counts this one.
		send := res
		if out.Status == Pending {
			locked, err := merchants.LockedControls(ctx, tx, out.MerchantID, out.Livemode)
			if err != nil {
				return err
			}
			earlier, err := recentByPrincipal(ctx, tx, out.MerchantID, out.Livemode, out.CreatedBy, out.UpdatedAt.Add(-locked.Window))
			if err != nil {
				return err
			}
			if locked.Over(earlier, out.AmountMinor) {
				// An in-process provider's answer is dropped: it moved no money.
				out.Status, send = RequiresApproval, nil
			}
		}
		if err := reserveAmount(ctx, tx, &out); err != nil {
			return err
		}
		var t *transition
		if send != nil {
			t = applyResult(&out, *send, out.UpdatedAt)
		}
		if err := insert(ctx, tx, &out); err != nil {
			return err
		}
		var answer providers.RefundResult
		if send != nil {
			answer = *send
		}
		return s.effects(ctx, tx, &out, true, t, answer)
	})
	if err != nil {
		return nil, err
	}
	if out.Status == Pending && res == nil {
		return s.sendRemote(ctx, cl, adapter, &out, target)
	}
	return out.view(), nil
}

// Approve clears a refund that requires approval and sends it. Four-eyes:
// the approver must not be the refund's creator (403
// self_approval_not_allowed); a refund in any other state is 409.
func (s *Service) Approve(ctx context.Context, cl store.Claim, pr auth.Principal, id string) (*Refund, error) {
	work := s.db.Within(cl)
	if r, ok, err := s.resumed(ctx, cl, pr); ok {
		return r, err
	}
	r, err := get(ctx, work, pr.MerchantID, pr.Livemode, id)
	if err != nil {
		return nil, err
	}
	if err := s.checkApprovable(ctx, work, r, pr); err != nil {
		return nil, err
	}
	target, err := payments.RefundTargetOf(ctx, work, r.MerchantID, r.Livemode, r.PaymentIntent)
	if err != nil {
		return nil, err
	}
	adapter, err := s.adapter(ctx, work, r.MerchantID, r.Livemode, r.Provider)
	if err != nil {
		return nil, err
	}
	res, err := sendLocal(ctx, adapter, r, target)
	if err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	var out Refund
	err = work.InTx(ctx, func(tx *store.Tx) error {
		out = *r
		if err := s.checkApprovable(ctx, tx, &out, pr); err != nil {
			return err
		}
		now := tx.Now()
		out.Status, out.ApprovedBy, out.UpdatedAt = Pending, &pr.ID, now
		if err := move(ctx, tx, &out, approve); err != nil {
			return changedMeanwhile(err, r.ID)
		}
		if res == nil {
			return nil
		}
		t := applyResult(&out, *res, now)
		if t != nil {
			if err := move(ctx, tx, &out, *t); err != nil {
				return err
			}
		}
		return s.effects(ctx, tx, &out, false, t, *res)
	})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return s.sendRemote(ctx, cl, adapter, &out, target)
	}
	return out.view(), nil
}

// checkApprovable refuses a refund that does not wait for approval (409) or
// an approver who is its creator (403).
func (s *Service) checkApprovable(ctx context.Context, q store.Querier, r *Refund, pr auth.Principal) error {
	if r.Status != RequiresApproval {
		return errs.InvalidState("refund %s is %s; only a refund in requires_approval can be approved", r.ID, r.Status)
	}
	same, err := merchants.SamePerson(ctx, q, r.CreatedBy, pr.ID, r.CreatedAt)
	if err != nil {
		return err
	}
	if same {
		return errs.Permission("self_approval_not_allowed",
			"the principal that created this refund cannot approve it; another key or portal user must")
	}
	return nil
}

// Cancel cancels a refund that requires approval; its amount returns to
// available. A refund in any other state is 409 invalid_state.
func (s *Service) Cancel(ctx context.Context, cl store.Claim, pr auth.Principal, id string) (*Refund, error) {
	work := s.db.Within(cl)
	var out *Refund
	err := work.InTx(ctx, func(tx *store.Tx) error {
		r, err := get(ctx, tx, pr.MerchantID, pr.Livemode, id)
		if err != nil {
			return err
		}
		if r.Status != RequiresApproval {
			return errs.InvalidState("refund %s is %s; only a refund in requires_approval can be canceled", r.ID, r.Status)
		}
		now := tx.Now()
		r.Status, r.CanceledAt, r.UpdatedAt = Canceled, &now, now
		if err := move(ctx, tx, r, cancel); err != nil {
			return changedMeanwhile(err, r.ID)
		}
		out = r
		return s.effects(ctx, tx, r, false, &cancel, providers.RefundResult{})
	})
	if err != nil {
		return nil, err
	}
	return out.view(), nil
}

// Get returns one refund of the caller's merchant and mode.
func (s *Service) Get(ctx context.Context, pr auth.Principal, id string) (*Refund, error) {
	r, err := get(ctx, s.db, pr.MerchantID, pr.Livemode, id)
	if err != nil {
		return nil, err
	}
	return r.view(), nil
}

// List returns a page of the caller's refunds, newest first.
func (s *Service) List(ctx context.Context, pr auth.Principal, f ListParams, page pagination.Page) ([]*Refund, bool, error) {
	return list(ctx, s.db, pr.MerchantID, pr.Livemode, f, page)
}

// adapter returns the refund adapter of a provider in a mode (503
// provider_unavailable when none serves it); a live rail's connection is
// read through rd (the request's store.Work).
func (s *Service) adapter(ctx context.Context, rd providers.Reader, merchantID string, livemode bool, provider string) (providers.RefundAdapter, error) {
	a, err := s.rails.For(ctx, rd, merchantID, livemode, provider)
	if err != nil {
		return nil, &errs.Error{Kind: errs.KindUnavailable, Code: "provider_unavailable",
			Message: "refunds on " + provider + " are not available in this mode", Err: err}
	}
	return a, nil
}

// emit records one event about r in tx.
func emit(ctx context.Context, tx *store.Tx, r *Refund, typ string) error {
	_, err := events.Emit(ctx, tx, r.MerchantID, r.Livemode, typ, "refund", r.ID, r.view())
	return err
}

// checkAmount is the rule "a refund may not exceed what is still refundable
// on its payment intent", on the intent as read, before anything is
// written: a 400 that costs nothing. The rule is decided for racing refunds
// by reserveAmount, in the refund's transaction; the bound itself is
// payments' (payments.FitsRefundable, and its SQL twin in ReserveRefund).
func checkAmount(target payments.RefundTarget, amount int64) error {
	if !payments.FitsRefundable(amount, target.Refundable) {
		return exceeds(target.Refundable)
	}
	return nil
}

// reserveAmount takes r's amount off what is refundable on its intent, in
// tx: the race-safe half of checkAmount (payments.ReserveRefund, a guarded
// UPDATE), so two racing refunds can never refund more than was captured.
func reserveAmount(ctx context.Context, tx *store.Tx, r *Refund) error {
	if _, err := payments.ReserveRefund(ctx, tx, r.MerchantID, r.Livemode, r.PaymentIntent, r.AmountMinor); err != nil {
		if errors.Is(err, payments.ErrExceedsRefundable) {
			return exceeds(-1)
		}
		return intentError(err)
	}
	return nil
}

// exceeds is the 400 for an amount above what is refundable (left < 0:
// not known, another refund took it meanwhile).
func exceeds(left int64) error {
	if left < 0 {
		return errs.Invalid("amount_minor", "amount_exceeds_refundable",
			"the amount exceeds what is still refundable on this payment intent (another refund took it meanwhile)")
	}
	return errs.Invalid("amount_minor", "amount_exceeds_refundable",
		"the amount exceeds what is still refundable on this payment intent (%d)", left)
}

// intentError names payment_intent as the parameter of a missing intent.
func intentError(err error) error {
	if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
		nf := *e
		nf.Param = "payment_intent"
		return &nf
	}
	return err
}

// changedMeanwhile turns a lost compare-and-set into 409.
func changedMeanwhile(err error, id string) error {
	if errors.Is(err, errLostRace) {
		return errs.InvalidState("refund %s changed state meanwhile; retrieve it and try again", id)
	}
	return err
}
