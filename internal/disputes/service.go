package disputes

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// Config is what the service needs.
type Config struct {
	DB     *store.DB
	Logger *slog.Logger
	// PushDelay is how long after submitting the sandbox's magic evidence
	// decides the dispute (PAYD_SANDBOX_PUSH_DELAY).
	PushDelay time.Duration
	// WakeJobs wakes the job runner after a job is queued (optional).
	WakeJobs func()
}

// Service opens, answers and closes disputes.
type Service struct {
	db        *store.DB
	log       *slog.Logger
	pushDelay time.Duration
	wake      func()
}

// New makes the service.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.WakeJobs == nil {
		cfg.WakeJobs = func() {}
	}
	return &Service{db: cfg.DB, log: cfg.Logger, pushDelay: cfg.PushDelay, wake: cfg.WakeJobs}
}

// opening is a dispute about to be created.
type opening struct {
	target      payments.DisputeTarget
	reason      string
	providerRef string
	// sandbox: a fully refunded intent cannot be disputed.
	sandbox bool
}

// errAlreadyDisputed means the intent has its dispute already.
var errAlreadyDisputed = errors.New("disputes: the payment intent is disputed already")

// open creates a dispute in needs_response: the intent's disputed flag, the
// row, dispute.created and dispute.funds_withdrawn, and the withdrawal from
// available, in one transaction. An intent disputed already answers
// errAlreadyDisputed with its dispute. It runs in work (the request's unit
// of work, or alone).
func (s *Service) open(ctx context.Context, work store.Work, o opening) (*Dispute, error) {
	t := o.target
	var out *Dispute
	err := work.InTx(ctx, func(tx *store.Tx) error {
		if err := payments.MarkDisputed(ctx, tx, t.IntentID, o.sandbox); err != nil {
			if errors.Is(err, payments.ErrAlreadyDisputed) {
				d, gerr := byIntent(ctx, tx, t.IntentID)
				if gerr != nil {
					return gerr
				}
				out = d
				return errAlreadyDisputed
			}
			return err
		}
		now := tx.Now()
		d := &Dispute{ID: ids.New("dp_"), Object: "dispute", PaymentIntent: t.IntentID, AmountMinor: t.Amount, Currency: t.Currency,
			Reason: o.reason, Status: NeedsResponse, EvidenceDueBy: now.Add(ResponseWindow), Metadata: map[string]string{},
			Livemode: t.Livemode, CreatedAt: now, UpdatedAt: now, MerchantID: t.MerchantID, Provider: t.Provider, ProviderRef: o.providerRef}
		if err := insert(ctx, tx, d); err != nil {
			return err
		}
		if err := emit(ctx, tx, d, EventCreated, EventFundsWithdrawn); err != nil {
			return err
		}
		out = d
		return post(ctx, tx, d, KindDispute)
	})
	if err != nil && !errors.Is(err, errAlreadyDisputed) {
		return nil, err
	}
	return out, err
}

// SandboxParams is the body of POST /v1/sandbox/disputes.
type SandboxParams struct {
	PaymentIntent string  `json:"payment_intent"`
	Reason        *string `json:"reason"`
}

// CreateSandbox disputes a succeeded card payment of the caller's merchant in
// test mode, as a cardholder's bank would: 403 permission_denied with a live
// key, 400 naming payment_intent for an intent that is not a card payment,
// 409 invalid_state for an intent not succeeded, fully refunded or disputed
// already. Its reads and writes run in the request's unit of work (cl;
// store.NoClaim without one).
func (s *Service) CreateSandbox(ctx context.Context, cl store.Claim, pr auth.Principal, in SandboxParams) (*Dispute, error) {
	work := s.db.Within(cl)
	if pr.Livemode {
		return nil, errs.Permission("permission_denied", "the sandbox routes take test-mode keys only")
	}
	reason := "general"
	switch {
	case in.PaymentIntent == "":
		return nil, errs.Missing("payment_intent")
	case in.Reason != nil && !slices.Contains(Reasons, *in.Reason):
		return nil, errs.Invalid("reason", "parameter_invalid", "reason must be one of %s", strings.Join(Reasons, ", "))
	case in.Reason != nil:
		reason = *in.Reason
	}
	t, err := payments.DisputeTargetOf(ctx, work, pr.MerchantID, pr.Livemode, in.PaymentIntent)
	if err != nil {
		return nil, err
	}
	if !t.Card {
		return nil, errs.Invalid("payment_intent", "parameter_invalid",
			"payment intent %s is not a card payment; only card payments (wallet_a card mode, card-present) can be disputed", t.IntentID)
	}
	d, err := s.open(context.WithoutCancel(ctx), work, opening{target: t, reason: reason, sandbox: true})
	if errors.Is(err, errAlreadyDisputed) {
		return nil, errs.InvalidState("payment intent %s is disputed already (%s)", t.IntentID, d.ID)
	}
	if err != nil {
		return nil, err
	}
	return d.view(), nil
}

// UpdateParams is the body of POST /v1/disputes/{id}, parsed.
type UpdateParams struct {
	Evidence EvidenceUpdate
	Submit   bool
	Metadata map[string]string
}

// Update saves evidence (and metadata) on a dispute that needs a response,
// and with Submit sends it: the dispute is then under_review. After
// evidence_due_by, or once submitted or closed, the evidence is read-only
// (409 invalid_state, nothing changed). In test mode a submitted
// uncategorized_text of winning_evidence or losing_evidence decides the
// dispute PushDelay later. It writes in the request's unit of work (cl).
func (s *Service) Update(ctx context.Context, cl store.Claim, pr auth.Principal, id string, in UpdateParams) (*Dispute, error) {
	if err := in.Evidence.Validate(); err != nil {
		return nil, err
	}
	if in.Metadata != nil {
		if err := payments.ValidateMetadata(in.Metadata); err != nil {
			return nil, err
		}
	}
	var out *Dispute
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		d, err := get(ctx, tx, pr.MerchantID, pr.Livemode, id)
		if err != nil {
			return err
		}
		now := tx.Now()
		if err := editable(d, now); err != nil {
			return err
		}
		in.Evidence.apply(&d.Evidence)
		if len(in.Metadata) > 0 {
			md := make(map[string]string, len(d.Metadata)+len(in.Metadata))
			for k, v := range d.Metadata {
				md[k] = v
			}
			for k, v := range in.Metadata {
				if v == "" {
					delete(md, k)
				} else {
					md[k] = v
				}
			}
			if err := payments.ValidateMetadata(md); err != nil {
				return err
			}
			d.Metadata = md
		}
		d.UpdatedAt = now
		t := save
		if in.Submit {
			t = submit
			d.Status, d.SubmittedAt = UnderReview, &now
		}
		if err := move(ctx, tx, d, t); err != nil {
			return changedMeanwhile(err, d.ID)
		}
		if err := emit(ctx, tx, d, t.Events...); err != nil {
			return err
		}
		out = d
		if in.Submit && !d.Livemode {
			return s.scheduleSandboxOutcome(ctx, tx, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out.view(), nil
}

// editable refuses a change of evidence after evidence_due_by or once the
// dispute left needs_response.
func editable(d *Dispute, now time.Time) error {
	if d.Status != NeedsResponse {
		return errs.InvalidState("dispute %s is %s; its evidence can no longer be changed", d.ID, d.Status)
	}
	if !now.Before(d.EvidenceDueBy) {
		return errs.InvalidState("dispute %s was due by %s; its evidence can no longer be changed", d.ID,
			d.EvidenceDueBy.UTC().Format(time.RFC3339))
	}
	return nil
}

// Close accepts the dispute's loss: needs_response → lost. A dispute under
// review or closed is 409 invalid_state. It writes in the request's unit of
// work (cl).
func (s *Service) Close(ctx context.Context, cl store.Claim, pr auth.Principal, id string) (*Dispute, error) {
	var out *Dispute
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		d, err := get(ctx, tx, pr.MerchantID, pr.Livemode, id)
		if err != nil {
			return err
		}
		if d.Status != NeedsResponse {
			return errs.InvalidState("dispute %s is %s; only a dispute that needs a response can be closed", d.ID, d.Status)
		}
		now := tx.Now()
		d.Status, d.ClosedAt, d.UpdatedAt = Lost, &now, now
		if err := move(ctx, tx, d, accept); err != nil {
			return changedMeanwhile(err, d.ID)
		}
		out = d
		return emit(ctx, tx, d, accept.Events...)
	})
	if err != nil {
		return nil, err
	}
	return out.view(), nil
}

// decide records the bank's decision on a dispute still open (won or lost),
// once: the compare-and-set win or lose, its events and, when won, the money
// back to available. A dispute closed already is left as it is. It runs in
// work.
func (s *Service) decide(ctx context.Context, work store.Work, id string, outcome Status) (*Dispute, error) {
	t := lose
	if outcome == Won {
		t = win
	}
	var out *Dispute
	err := work.InTx(ctx, func(tx *store.Tx) error {
		d, err := getByID(ctx, tx, id)
		if err != nil {
			return err
		}
		out = d
		if d.Status.Terminal() {
			return nil
		}
		now := tx.Now()
		d.Status, d.ClosedAt, d.UpdatedAt = t.To, &now, now
		if err := move(ctx, tx, d, t); err != nil {
			return err
		}
		if err := emit(ctx, tx, d, t.Events...); err != nil {
			return err
		}
		if t.To == Won {
			return post(ctx, tx, d, KindDisputeReversal)
		}
		return nil
	})
	if errors.Is(err, errLostRace) {
		return getByID(ctx, work, id)
	}
	return out, err
}

// Get returns one dispute of the caller's merchant and mode.
func (s *Service) Get(ctx context.Context, pr auth.Principal, id string) (*Dispute, error) {
	d, err := get(ctx, s.db, pr.MerchantID, pr.Livemode, id)
	if err != nil {
		return nil, err
	}
	return d.view(), nil
}

// List returns a page of the caller's disputes, newest first.
func (s *Service) List(ctx context.Context, pr auth.Principal, f ListParams, page pagination.Page) ([]*Dispute, bool, error) {
	return list(ctx, s.db, pr.MerchantID, pr.Livemode, f, page)
}

// emit records events about d in tx, in order.
func emit(ctx context.Context, tx *store.Tx, d *Dispute, types ...string) error {
	v := d.view()
	for _, typ := range types {
		if _, err := events.Emit(ctx, tx, d.MerchantID, d.Livemode, typ, "dispute", d.ID, v); err != nil {
			return err
		}
	}
	return nil
}

// changedMeanwhile turns a lost compare-and-set into 409.
func changedMeanwhile(err error, id string) error {
	if errors.Is(err, errLostRace) {
		return errs.InvalidState("dispute %s changed state meanwhile (or its evidence came due); retrieve it and try again", id)
	}
	return err
}
