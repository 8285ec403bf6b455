package disputes

import (
	"context"
	"errors"
	"slices"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/store"
)

// A live dispute arrives as the provider's signed callbacks of kind
// dispute: dispute.created (status open) and dispute.closed (won or lost).
// internal/callbacks verifies and de-duplicates them by event id; here each
// is applied so that a second delivery under another event id, or a created
// arriving after its closed, changes nothing: the intent has at most one
// dispute (payments.MarkDisputed), and a decision is the compare-and-set win
// or lose from an open state.

// ApplyProviderDispute records what a live provider reported about a dispute
// of one of the merchant's payments. The report must match the payment
// (provider, amount, currency), else it is a 400 and nothing changes.
func (s *Service) ApplyProviderDispute(ctx context.Context, merchantID, provider string, pd protocol.Dispute) error {
	ctx = context.WithoutCancel(ctx)
	if pd.PaymentReference == "" {
		return errs.Invalid("data", "parameter_invalid", "the reported dispute names no payment_reference")
	}
	var outcome Status
	switch pd.Status {
	case protocol.DisputeOpen:
	case protocol.DisputeWon:
		outcome = Won
	case protocol.DisputeLost:
		outcome = Lost
	default:
		return errs.Invalid("data", "parameter_invalid", "the reported dispute's status %q is not open, won or lost", pd.Status)
	}
	// A callback has no idempotent request behind it: its statements run alone.
	work := s.db.Within(store.NoClaim)
	t, err := payments.DisputeTargetByProviderRef(ctx, work, merchantID, provider, pd.PaymentReference)
	if err != nil {
		return err
	}
	if t.Currency != pd.Currency || pd.AmountMinor <= 0 || pd.AmountMinor > t.Amount {
		return errs.Invalid("data", "parameter_invalid", "the reported dispute does not match payment intent %s (amount or currency)", t.IntentID)
	}
	reason := pd.Reason
	if !slices.Contains(Reasons, reason) {
		reason = "general"
	}
	d, err := s.open(ctx, work, opening{target: t, reason: reason, providerRef: pd.ID})
	if e := errs.As(err); e != nil && e.Code == "invalid_state" {
		// The payment is not one a dispute can be about (not succeeded):
		// the report does not match payd's, a 400 the provider need not retry.
		return errs.Invalid("data", "parameter_invalid", "the reported dispute names payment intent %s, which cannot be disputed: %s", t.IntentID, e.Message)
	}
	if err != nil && !errors.Is(err, errAlreadyDisputed) {
		return err
	}
	if outcome == "" {
		return nil // created (or created again): the dispute exists
	}
	_, err = s.decide(ctx, work, d.ID, outcome)
	return err
}
