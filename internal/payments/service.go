package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// Config is what the service needs.
type Config struct {
	DB        *store.DB
	Providers *providers.Registry
	Logger    *slog.Logger
	// WakeJobs wakes the job runner after a poll job is queued (optional).
	WakeJobs func()
	// Expiry says when the expiry job cancels abandoned intents (zero:
	// never).
	Expiry Expiry
	// Holds reports whether an idempotent request in flight holds ref at a
	// recovery point (idempotency.Holds, handed over by the wiring), run in
	// the transaction that would decide about ref. Nil: none ever does.
	Holds func(ctx context.Context, tx *store.Tx, ref string, now time.Time) (bool, error)
}

// Service creates, confirms and settles payment intents through the
// provider adapters, and records every outcome with its ledger posting and
// events in one transaction.
type Service struct {
	db   *store.DB
	reg  *providers.Registry
	log  *slog.Logger
	wake func()
	// expiry is when abandoned intents are cancelled (Expire).
	expiry Expiry
	// holds is Config.Holds.
	holds func(ctx context.Context, tx *store.Tx, ref string, now time.Time) (bool, error)
	// hooks are told every status an intent is given, inside the
	// transaction that records it (see OnStatus).
	hooks []statusHooks
	// batchFallbacks counts CreateMany batches that failed and were
	// recorded intent by intent instead.
	batchFallbacks atomic.Int64
}

// BatchFallbacks is how many CreateMany batches failed as a whole and had
// their intents recorded one by one (each fell back quietly, with a warning
// in the log).
func (s *Service) BatchFallbacks() int64 { return s.batchFallbacks.Load() }

// statusHooks is one registered hook, with its batch form if it has one.
type statusHooks struct {
	one  StatusHook
	many BatchStatusHook
}

// StatusHook is told, inside the database transaction that records it, the
// status an intent was just given: at creation and by every later
// transition (succeeded, canceled, compliance_review, requires_action). It
// lets a capability that started the intent (billing links an invoice
// through metadata["invoice"]) commit its own consequences with the
// payment's, exactly once: the transition itself is a compare-and-set. A
// hook must only write through tx, never call out, and return quickly; its
// error rolls the whole transaction back.
type StatusHook func(ctx context.Context, tx *store.Tx, pi Intent) error

// OnStatus registers h. It must be called while wiring, before the service
// handles requests.
func (s *Service) OnStatus(h StatusHook) { s.hooks = append(s.hooks, statusHooks{one: h}) }

// BatchStatusHook is a StatusHook told of many intents given their status
// in one transaction (CreateMany), so it can write its consequences with
// set-based statements. The same rules hold: write only through tx.
type BatchStatusHook func(ctx context.Context, tx *store.Tx, pis []Intent) error

// OnStatusBatch registers one, and many as its batch form: CreateMany calls
// many once with all its intents instead of one for each.
func (s *Service) OnStatusBatch(one StatusHook, many BatchStatusHook) {
	s.hooks = append(s.hooks, statusHooks{one: one, many: many})
}

// NewService makes the service.
func NewService(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.WakeJobs == nil {
		cfg.WakeJobs = func() {}
	}
	if cfg.Holds == nil {
		cfg.Holds = func(context.Context, *store.Tx, string, time.Time) (bool, error) { return false, nil }
	}
	return &Service{db: cfg.DB, reg: cfg.Providers, log: cfg.Logger, wake: cfg.WakeJobs, expiry: cfg.Expiry, holds: cfg.Holds}
}

// maxRaces bounds how often a step re-reads an intent that another request
// moved meanwhile before giving up with 409.
const maxRaces = 5

// prepare validates a new intent and picks its adapter and sandbox
// scenario: everything Create does before the provider is involved.
func (s *Service) prepare(ctx context.Context, rd providers.Reader, p auth.Principal, in CreateParams) (*record, providers.PaymentAdapter, error) {
	n, err := validate(in)
	if err != nil {
		return nil, nil, err
	}
	adapter, err := s.reg.PaymentAdapter(ctx, rd, p.MerchantID, p.Livemode, n.provider)
	if err != nil {
		return nil, nil, err
	}
	scenario := ""
	if sel, ok := adapter.(providers.ScenarioSelector); ok {
		sent := ""
		if n.msisdn != nil {
			sent = *n.msisdn
		}
		if scenario, err = sel.SelectScenario(n.rail, in.Scenario, sent); err != nil {
			return nil, nil, err
		}
	}
	now := s.db.Now()
	r := &record{Intent: Intent{ID: ids.New("pi_"), Object: "payment_intent", Status: Processing, AmountMinor: n.amountMinor,
		Currency: n.currency, Provider: n.provider, CustomerMSISDN: n.msisdn, Description: n.description, Metadata: n.metadata,
		ReturnURL: n.returnURL, Livemode: p.Livemode, CreatedAt: now, MerchantID: p.MerchantID, CaptureMethod: n.captureMethod,
		InvoiceID: in.InvoiceID},
		flow: n.flow, scenario: scenario, updatedAt: now}
	if c, ok := adapter.(providers.PaymentChecker); ok {
		if err := c.CheckPayment(r.payment()); err != nil {
			return nil, nil, err
		}
	}
	if r.CaptureMethod == CaptureManual && !providers.HoldsAuthorizations(adapter) {
		return nil, nil, errs.Invalid("capture_method", "parameter_invalid",
			"capture_method manual is not offered by %s in this mode yet", r.Provider)
	}
	return r, adapter, nil
}

// Create validates the request, asks the provider (the sandbox in test mode)
// to start the payment, and records the intent in the state the provider's
// answer leaves it: requires_action with its next_action, or at once
// succeeded (with the ledger credit), canceled (the caller answers 402) or
// compliance_review. A sandbox network_timeout returns the canceled intent
// with a 504 provider_timeout error. Bad input is a 400 naming the field,
// and then nothing is written. cl is the request's idempotency claim
// (store.NoClaim without one): a remote provider's call commits a recovery
// point on it first.
func (s *Service) Create(ctx context.Context, cl store.Claim, p auth.Principal, in CreateParams) (Intent, error) {
	r, adapter, err := s.prepare(ctx, s.db.Within(cl), p, in)
	if err != nil {
		return Intent{}, err
	}
	// From here the provider is involved: finish recording its answer even
	// if the client goes away.
	ctx = context.WithoutCancel(ctx)
	if adapter.Remote() {
		return s.createRemote(ctx, cl, p, adapter, r)
	}
	pay := r.payment()
	pay.BeforeDelay = cl.LookUp
	res, err := adapter.Initiate(ctx, pay)
	if err != nil {
		return Intent{}, fmt.Errorf("initiate %s payment: %w", r.Provider, err)
	}
	return s.recordNew(ctx, s.db.Within(cl), r, res)
}

// recordNew writes a new intent in the state a local provider's answer
// leaves it, with its events, hooks and ledger credit, in one transaction.
func (s *Service) recordNew(ctx context.Context, work store.Work, r *record, res providers.Result) (Intent, error) {
	var out record
	err := work.InTx(ctx, func(tx *store.Tx) error {
		out = *r
		t, err := applyResult(&out, res, tx.Now())
		if err != nil {
			return err
		}
		if err := insert(ctx, tx, &out); err != nil {
			return err
		}
		if _, err := emitCreated(ctx, tx, &out); err != nil {
			return err
		}
		return s.effects(ctx, tx, &out, t, res)
	})
	if err != nil {
		return Intent{}, err
	}
	return answer(&out, res)
}

// createRemote records the intent as processing before calling a remote
// provider, so a crash or a lost answer leaves a row to reconcile. The row
// commits with a recovery point on the request's Idempotency-Key: a retry
// after a crash resumes with this intent and asks the provider again under
// the same provider key (<pi_id>:initiate), which the provider answers
// without initiating twice.
func (s *Service) createRemote(ctx context.Context, cl store.Claim, p auth.Principal, adapter providers.PaymentAdapter, r *record) (Intent, error) {
	work := s.db.Within(cl)
	if rp, ok := cl.Resuming(); ok && rp.Point == pointInitiate {
		// Take the key over (a fresh lease) before anything else, so
		// reconciliation leaves the intent to this run; then read where
		// it stands.
		if err := cl.RecoveryPoint(ctx, pointInitiate, rp.Ref); err != nil {
			return Intent{}, err
		}
		cur, err := load(ctx, work, p.MerchantID, p.Livemode, rp.Ref)
		if err != nil {
			return Intent{}, err
		}
		if cur.Status != Processing {
			return cur.view(), nil
		}
		r = cur
	} else {
		err := work.InTx(ctx, func(tx *store.Tx) error {
			if err := insert(ctx, tx, r); err != nil {
				return err
			}
			_, err := emitCreated(ctx, tx, r)
			return err
		})
		if err == nil {
			err = cl.RecoveryPoint(ctx, pointInitiate, r.ID)
		}
		if err != nil {
			return Intent{}, err
		}
	}
	pay := r.payment()
	pay.BeforeDelay = cl.LookUp
	res, err := adapter.Initiate(ctx, pay)
	if err != nil {
		return unknownOutcome(r, err)
	}
	out, err := s.record(ctx, cl, r, res)
	if errors.Is(err, errLostRace) {
		// The provider's callback (or reconciliation) recorded an outcome
		// before this answer came back.
		out, err = s.recordLatest(ctx, cl, r.ID, res)
	}
	if err != nil {
		return Intent{}, err
	}
	return answer(out, res)
}

// The recovery points of requests that call a remote provider: the intent
// committed (processing) and about to be sent, or claimed for a step.
const (
	pointInitiate = "payment_intent.initiate"
	pointStep     = "payment_intent.step"
)

// unknownOutcome answers a provider call whose result is not known: the
// intent stays processing for reconciliation.
func unknownOutcome(r *record, err error) (Intent, error) {
	if errors.Is(err, providers.ErrNoAnswer) {
		return r.view(), nil
	}
	return r.view(), &errs.Error{Kind: errs.KindProvider, Code: "provider_error", Err: err,
		Message: "the provider could not be reached; the payment intent stays processing until it is reconciled",
		Extra:   map[string]any{"payment_intent": r.ID}}
}

// record writes a provider's answer on an intent read at r's version; cl is
// the claim of the request that called the provider (store.NoClaim for
// reconciliation and for a request without an Idempotency-Key).
func (s *Service) record(ctx context.Context, cl store.Claim, r *record, res providers.Result) (*record, error) {
	work := s.db.Within(cl)
	var out record
	err := work.InTx(ctx, func(tx *store.Tx) error {
		if res.NotFound && r.Status == Processing && cl == store.NoClaim {
			// The provider never saw it; but a request that crashed
			// before sending it may still resume and send it.
			held, err := s.holds(ctx, tx, r.ID, tx.Now())
			if err != nil {
				return err
			}
			if held {
				return errHeldByRequest
			}
		}
		out = *r
		t, err := applyResult(&out, res, tx.Now())
		if err != nil {
			return err
		}
		if err := move(ctx, tx, &out, t); err != nil {
			return err
		}
		if res.Outcome == providers.Pending && res.Failure != nil {
			// A declined card on the hosted page, with another allowed.
			if _, err := tx.Exec(ctx, "UPDATE payment_intents SET page_attempts = page_attempts + 1 WHERE id = ?", out.ID); err != nil {
				return err
			}
		}
		return s.effects(ctx, tx, &out, t, res)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// applyResult sets r to the state a provider's answer leads to and returns
// the transition that gets it there.
func applyResult(r *record, res providers.Result, now time.Time) (transition, error) {
	r.updatedAt = now
	if res.ProviderRef != "" {
		r.providerRef = res.ProviderRef
	}
	if res.MethodDetails != nil {
		raw := append(json.RawMessage(nil), res.MethodDetails...)
		r.PaymentMethodDetails = &raw
	}
	switch res.Outcome {
	case providers.Pending:
		if res.NextAction != nil {
			r.NextAction = &NextAction{Type: res.NextAction.Type, OTPLength: res.NextAction.OTPLength, RedirectURL: res.NextAction.RedirectURL}
		}
		if r.NextAction == nil {
			return transition{}, fmt.Errorf("payments: the %s adapter left intent %s pending with nothing to do", r.Provider, r.ID)
		}
		if res.PageStep != "" {
			r.pageStep = res.PageStep
		}
		if res.PageToken != "" {
			r.pageTokenHash = hashToken(res.PageToken)
		}
		if f := res.Failure; f != nil {
			// Still waiting, after a refusal the customer can recover from
			// (a declined card, with another card allowed).
			r.LastError = &LastError{Code: f.Code, Message: f.Message, Provider: r.Provider, DeclineCode: f.DeclineCode}
		}
		r.Status = RequiresAction
		return await, nil
	case providers.Succeeded:
		if res.CapturedMinor < 0 || res.CapturedMinor > r.AmountMinor {
			return transition{}, fmt.Errorf("payments: the %s adapter captured %d of %d", r.Provider, res.CapturedMinor, r.AmountMinor)
		}
		if r.CaptureMethod == CaptureManual && r.Status != RequiresCapture {
			// Authorised only: the money is captured by POST .../capture.
			r.Status, r.AmountCapturableMinor, r.NextAction, r.LastError = RequiresCapture, res.CapturedMinor, nil, nil
			return authorize, nil
		}
		r.Status, r.AmountCapturedMinor, r.SucceededAt, r.NextAction, r.LastError = Succeeded, res.CapturedMinor, &now, nil, nil
		return succeed, nil
	case providers.Failed:
		f := res.Failure
		if f == nil {
			f = &providers.Failure{Code: "provider_declined", Message: "The provider declined the payment."}
		}
		r.Status, r.CanceledAt, r.NextAction = Canceled, &now, nil
		r.LastError = &LastError{Code: f.Code, Message: f.Message, Provider: r.Provider, DeclineCode: f.DeclineCode}
		return cancel, nil
	case providers.Review:
		r.Status, r.NextAction = ComplianceReview, nil
		return holdForReview, nil
	}
	return transition{}, fmt.Errorf("payments: the %s adapter answered outcome %d", r.Provider, res.Outcome)
}

// effects writes what accompanies a transition in its transaction: the
// sandbox webhook-fail marker, the ledger credit of a success, the event,
// and the next poll of a push approval.
func (s *Service) effects(ctx context.Context, tx *store.Tx, r *record, t transition, res providers.Result) error {
	if res.FailFirstWebhook {
		if err := events.MarkWebhookFail(ctx, tx, r.ID); err != nil {
			return err
		}
	}
	if t.Event() != "" {
		if _, err := events.Emit(ctx, tx, r.MerchantID, r.Livemode, t.Event(), "payment_intent", r.ID, r.view()); err != nil {
			return err
		}
	}
	if t.To == Succeeded && res.DisputeAfter > 0 {
		if err := s.scheduleSandboxDispute(ctx, tx, r.ID, res.DisputeAfter); err != nil {
			return err
		}
	}
	if t.To == RequiresAction && res.PollAfter > 0 {
		if err := s.schedulePoll(ctx, tx, r.ID, tx.Now().Add(res.PollAfter)); err != nil {
			return err
		}
	}
	for _, h := range s.hooks {
		if err := h.one(ctx, tx, r.view()); err != nil {
			return err
		}
	}
	// The credit comes last: every payment of a merchant updates the same
	// two account rows, so their row locks are held for as short a time as
	// the transaction allows.
	if t.To == Succeeded && r.AmountCapturedMinor > 0 {
		return creditMerchant(ctx, tx, r)
	}
	return nil
}

// emitCreated records payment_intent.created with the intent as written.
func emitCreated(ctx context.Context, tx *store.Tx, r *record) (events.Event, error) {
	return events.Emit(ctx, tx, r.MerchantID, r.Livemode, EventCreated, "payment_intent", r.ID, r.view())
}

// creditMerchant books a captured payment: the provider owes it (clearing)
// and the merchant can spend it (available). Only the captured amount moves.
func creditMerchant(ctx context.Context, tx *store.Tx, r *record) error {
	_, err := ledger.Post(ctx, tx, creditTransaction(r))
	if errors.Is(err, ledger.ErrInvalidEntry) {
		return errs.Invalid("amount", "amount_too_large", "crediting this payment would overflow the merchant's balance")
	}
	return err
}

// creditTransaction is the ledger transaction of a captured payment.
func creditTransaction(r *record) ledger.Transaction {
	acct := func(kind ledger.AccountKind, provider string) ledger.AccountRef {
		return ledger.AccountRef{MerchantID: r.MerchantID, Livemode: r.Livemode, Currency: r.Currency, Kind: kind, Provider: provider}
	}
	return ledger.Transaction{MerchantID: r.MerchantID, Livemode: r.Livemode, Kind: "payment_succeeded", Reference: r.ID,
		Entries: []ledger.Entry{
			{Account: acct(ledger.Available, ""), Amount: r.AmountCapturedMinor},
			{Account: acct(ledger.ProviderClearing, r.Provider), Amount: -r.AmountCapturedMinor},
		}}
}

// answer turns a recorded outcome into the service's reply. The refusals
// that have an error of their own (wrong or expired code, the sandbox
// timeout) come back as errors carrying the intent's id; other refusals
// return the canceled intent, which the API answers with 402.
func answer(r *record, res providers.Result) (Intent, error) {
	v := r.view()
	if res.Outcome != providers.Failed || res.Failure == nil {
		return v, nil
	}
	extra := map[string]any{"payment_intent": v.ID}
	switch res.Failure.Code {
	case "otp_invalid":
		return v, &errs.Error{Kind: errs.KindInvalid, Code: "otp_invalid", Message: "otp invalid", Param: "otp", Extra: extra}
	case "otp_expired":
		return v, &errs.Error{Kind: errs.KindInvalid, Code: "otp_expired", Message: res.Failure.Message, Param: "otp", Extra: extra}
	case "provider_timeout":
		return v, &errs.Error{Kind: errs.KindProviderTimeout, Code: "provider_timeout", Message: res.Failure.Message, Extra: extra}
	}
	return v, nil
}

// Get returns one intent of the principal's merchant and mode.
func (s *Service) Get(ctx context.Context, p auth.Principal, id string) (Intent, error) {
	r, err := loadView(ctx, s.db, p.MerchantID, p.Livemode, id)
	if err != nil {
		return Intent{}, err
	}
	return r.view(), nil
}

// adapterFor returns the adapter of an existing intent (a live one's
// connection read through rd, the caller's store.Work).
func (s *Service) adapterFor(ctx context.Context, rd providers.Reader, r *record) (providers.PaymentAdapter, error) {
	return s.reg.PaymentAdapter(ctx, rd, r.MerchantID, r.Livemode, r.Provider)
}

// errNothingToDo stops a step whose intent no longer waits for it; the
// caller answers with the intent as it is.
var errNothingToDo = errors.New("payments: nothing to do")

// step runs one provider call on an intent and records its answer, exactly
// once however many requests race: each reads the intent, checks it may
// act, and writes the answer as a compare-and-set on the version it read; a
// loser reads again (and usually finds nothing left to do). For a remote
// adapter the intent is claimed (processing) before the call, so only one
// request ever calls the provider.
func (s *Service) step(ctx context.Context, cl store.Claim, read func() (*record, error), check func(*record) error,
	call func(providers.PaymentAdapter, providers.Payment) (providers.Result, error)) (*record, providers.Result, error) {
	work := s.db.Within(cl)
	for range maxRaces {
		r, err := read()
		if err != nil {
			return nil, providers.Result{}, err
		}
		adapter, err := s.adapterFor(ctx, work, r)
		if err != nil {
			return r, providers.Result{}, err
		}
		resumed := false
		if rp, ok := cl.Resuming(); ok && rp.Point == pointStep && rp.Ref == r.ID && adapter.Remote() {
			// An earlier run of this request claimed the intent and called
			// the provider, then ended without recording an answer: ask
			// again under the same provider key, unless the intent settled.
			if r.Status != Processing {
				return r, providers.Result{}, nil
			}
			resumed = true
		} else if err := check(r); err != nil {
			return r, providers.Result{}, err
		}
		if adapter.Remote() && !resumed {
			claimed := *r
			claimed.Status, claimed.updatedAt = Processing, s.db.Now()
			err := work.InTx(ctx, func(tx *store.Tx) error {
				c := claimed
				if err := move(ctx, tx, &c, claim); err != nil {
					return err
				}
				claimed = c
				return nil
			})
			if errors.Is(err, errLostRace) {
				continue
			}
			if err == nil {
				err = cl.RecoveryPoint(ctx, pointStep, claimed.ID)
			}
			if err != nil {
				return r, providers.Result{}, err
			}
			r = &claimed
		}
		pay := r.payment()
		pay.BeforeDelay = cl.LookUp
		res, err := call(adapter, pay)
		if err != nil {
			if adapter.Remote() {
				_, err = unknownOutcome(r, err)
			}
			return r, res, err
		}
		out, err := s.record(ctx, cl, r, res)
		if errors.Is(err, errLostRace) && adapter.Remote() {
			// The intent was ours (claimed) during the call, so only the
			// provider's callback or reconciliation moved it: record this
			// answer on what is there now, unless it settled meanwhile.
			out, err = s.recordLatest(ctx, cl, r.ID, res)
		}
		if errors.Is(err, errLostRace) {
			continue
		}
		if err != nil {
			return r, res, err
		}
		return out, res, nil
	}
	return nil, providers.Result{}, errs.InvalidState("the payment intent kept changing while this request ran; retrieve it and try again")
}
