package payments

import (
	"context"
	"errors"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// Live providers report outcomes three ways: the answer of payd's own call,
// a callback, and a status query by reconciliation. They may arrive in any
// order, twice, or while a call is still in flight; each is written with
// recordLatest, a compare-and-set on the version just read that gives up
// once the intent is final, so an intent settles once (one ledger credit,
// one payment_intent.succeeded) whichever report comes first.

// ApplyProviderResult records what a live provider reported about one of a
// merchant's live intents in a callback. The report must match the intent
// (provider, amount, currency): otherwise it is a 400 and nothing changes.
// An intent settled already is left as it is, and a pending report never
// undoes a final state.
func (s *Service) ApplyProviderResult(ctx context.Context, merchantID, provider, id string, amountMinor int64, currency string,
	res providers.Result) (Intent, error) {
	ctx = context.WithoutCancel(ctx)
	r, err := load(ctx, s.db, merchantID, true, id)
	if err != nil {
		return Intent{}, err
	}
	if r.Provider != provider || r.AmountMinor != amountMinor || r.Currency != currency {
		return Intent{}, errs.Invalid("data", "parameter_invalid",
			"the reported payment does not match payment intent %s (provider, amount or currency)", id)
	}
	if res.Outcome == providers.Succeeded && (res.CapturedMinor <= 0 || res.CapturedMinor > r.AmountMinor) {
		return Intent{}, errs.Invalid("data", "parameter_invalid", "the reported capture does not fit payment intent %s", id)
	}
	out, err := s.recordLatest(ctx, store.NoClaim, id, res)
	if err != nil {
		return Intent{}, err
	}
	return out.view(), nil
}

// ReconcileIntent asks the provider where a live intent left processing or
// requires_action stands and records the answer; it returns the intent's
// status afterwards. An intent in any other state, or in test mode, is left
// alone.
func (s *Service) ReconcileIntent(ctx context.Context, id string) (Status, error) {
	r, err := loadByID(ctx, s.db, id)
	if err != nil {
		return "", err
	}
	if !r.Livemode || (r.Status != Processing && r.Status != RequiresAction) {
		return r.Status, nil
	}
	adapter, err := s.adapterFor(ctx, s.db, r)
	if err != nil {
		return r.Status, err
	}
	if !adapter.Remote() {
		return r.Status, nil
	}
	res, err := adapter.Status(ctx, r.payment())
	if err != nil {
		return r.Status, err
	}
	out, err := s.recordLatest(ctx, store.NoClaim, id, res)
	if errors.Is(err, errHeldByRequest) {
		return r.Status, nil // its request resumes it; asked again next time
	}
	if err != nil {
		return r.Status, err
	}
	return out.Status, nil
}

// errHeldByRequest refuses to record that the provider never saw an intent
// while the request that creates it may still resume and send it.
var errHeldByRequest = errors.New("payments: the intent is held by a request at its recovery point")

// recordLatest writes a remote provider's answer on the intent as it is
// now, unless there is nothing left for it to change.
func (s *Service) recordLatest(ctx context.Context, cl store.Claim, id string, res providers.Result) (*record, error) {
	work := s.db.Within(cl)
	for range maxRaces {
		r, err := loadByID(ctx, work, id)
		if err != nil {
			return nil, err
		}
		if nothingToRecord(r, res) {
			return r, nil
		}
		out, err := s.record(ctx, cl, r, res)
		if errors.Is(err, errLostRace) {
			continue
		}
		return out, err
	}
	return nil, errs.InvalidState("the payment intent kept changing while a provider's answer was recorded; it is reconciled later")
}

// nothingToRecord reports whether an answer would change nothing: the
// intent is final (or held for review, or authorised and waiting for its
// capture), or the answer is a pending one the
// waiting intent already shows.
func nothingToRecord(r *record, res providers.Result) bool {
	if r.Status.Terminal() || r.Status == ComplianceReview || r.Status == RequiresCapture {
		return true
	}
	if res.Outcome != providers.Pending || r.Status != RequiresAction {
		return false
	}
	return res.NextAction == nil || r.NextAction != nil && r.NextAction.Type == res.NextAction.Type &&
		r.NextAction.RedirectURL == res.NextAction.RedirectURL && (res.PageStep == "" || res.PageStep == r.pageStep)
}
