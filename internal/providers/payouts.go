package providers

import (
	"context"
	"errors"
	"time"
)

// PayoutRequest is one payout as a rail receives it.
type PayoutRequest struct {
	// IdempotencyKey identifies the payout at the provider: a second send
	// under the same key must not pay again but answer the first outcome.
	// payd sends the payout's reference (qualified by its batch for batch
	// rows), and the same key again on every retry.
	IdempotencyKey   string
	Provider         string
	Amount           int64 // minor units
	Currency         string
	RecipientMSISDN  string // mobile-money rails
	RecipientAccount string // bank rails
	RecipientName    string
	Description      string
	// ComplianceCleared is set once the merchant released a payout the
	// provider had held for compliance (PayoutHeld), so the provider pays it.
	ComplianceCleared bool
	// Scenario is the sandbox scenario chosen when the payout was made
	//; live adapters ignore it.
	Scenario string
}

// PayoutOutcome is what a rail says about a payout.
type PayoutOutcome string

// The outcomes a rail reports.
const (
	// PayoutSucceeded: the money left; the recipient is paid.
	PayoutSucceeded PayoutOutcome = "succeeded"
	// PayoutFailed: the rail refused; nothing was paid (Failure says why).
	PayoutFailed PayoutOutcome = "failed"
	// PayoutHeld: the rail holds the payout for a compliance review.
	PayoutHeld PayoutOutcome = "held"
	// PayoutUnknown: no answer yet (a timeout, an asynchronous rail, or a
	// key the provider has not seen); ask again later with PayoutStatus.
	PayoutUnknown PayoutOutcome = "unknown"
)

// PayoutResult is a rail's answer.
type PayoutResult struct {
	Outcome PayoutOutcome
	// ProviderReference is the rail's own id of the payout, when it has one.
	ProviderReference string
	// Failure is set when Outcome is PayoutFailed or PayoutHeld.
	Failure *Failure
}

// PayoutAdapter sends payouts to one rail. Both methods are idempotent by
// req.IdempotencyKey and safe to call concurrently.
//
// SendPayout returns PayoutUnknown (and no error) when the rail did not
// answer in time; an error means the request could not be made at all, so
// the caller may send again under the same key. PayoutStatus asks what
// became of an earlier send; a key the rail never saw is PayoutUnknown, and
// the caller sends again.
type PayoutAdapter interface {
	SendPayout(ctx context.Context, req PayoutRequest) (PayoutResult, error)
	PayoutStatus(ctx context.Context, req PayoutRequest) (PayoutResult, error)
	// PayoutTimeout is the longest one call may take; a payout claimed for a
	// call is leased for longer than this.
	PayoutTimeout() time.Duration
}

// InProcessPayouts is implemented by a payout adapter that may answer some
// requests at once without leaving the process (the sandbox, except when it
// simulates a timeout). Before any other call, the request that sends a
// payout commits what it wrote with a recovery point on its Idempotency-Key.
type InProcessPayouts interface {
	AnswersInProcess(req PayoutRequest) bool
}

// AnswersInProcess reports whether a answers req without leaving the process
// or waiting.
func AnswersInProcess(a PayoutAdapter, req PayoutRequest) bool {
	l, ok := a.(InProcessPayouts)
	return ok && l.AnswersInProcess(req)
}

// ErrPayoutRailUnavailable is returned by PayoutRails.For when no adapter
// serves the provider in that mode (a live provider not connected, or live
// adapters not configured).
var ErrPayoutRailUnavailable = errors.New("providers: no payout rail for this provider and mode")

// PayoutRails picks the payout adapter by the key's mode: the sandbox for
// test mode, the live adapters for live mode. Business logic asks it and
// never names either.
type PayoutRails struct {
	// Sandbox serves every provider in test mode.
	Sandbox PayoutAdapter
	// Live returns the live adapter of a merchant's provider, reading its
	// connection through rd; nil until live adapters are wired.
	Live func(ctx context.Context, rd Reader, merchantID, provider string) (PayoutAdapter, error)
}

// For returns the adapter that sends a merchant's payouts on provider.
// A live rail's connection is read through rd: the caller's store.Work.
func (r *PayoutRails) For(ctx context.Context, rd Reader, merchantID string, livemode bool, provider string) (PayoutAdapter, error) {
	if !livemode {
		if r.Sandbox == nil {
			return nil, ErrPayoutRailUnavailable
		}
		return r.Sandbox, nil
	}
	if r.Live == nil {
		return nil, ErrPayoutRailUnavailable
	}
	a, err := r.Live(ctx, rd, merchantID, provider)
	if err != nil {
		return nil, errors.Join(ErrPayoutRailUnavailable, err)
	}
	return a, nil
}
