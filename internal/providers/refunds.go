package providers

import (
	"context"
	"errors"
	"time"
)

// RefundRequest is one refund as a provider receives it.
type RefundRequest struct {
	// IdempotencyKey identifies the refund at the provider: payd sends the
	// refund's id (re_...), and a second send under it must not refund
	// again but answer the first outcome.
	IdempotencyKey string
	Provider       string
	// PaymentIntent is the refunded payment's id (pi_...) and PaymentRef
	// the provider's own reference of it, when it gave one.
	PaymentIntent string
	PaymentRef    string
	Amount        int64 // minor units
	Currency      string
	// CustomerMSISDN is the number the payment came from (wallet and bank
	// rails), as the provider wants it; "" for card payments.
	CustomerMSISDN string
	// CardPresent marks the refund of a card-present payment: PaymentRef is
	// then the terminal payment's reference at the card gateway (tpay_...),
	// and a live adapter sends it through the gateway's refund call.
	CardPresent bool
	// Scenario is the sandbox scenario chosen when the refund was made;
	// live adapters ignore it.
	Scenario string
	// CreatedAt is when the refund was made (the sandbox times its delayed
	// outcomes from it).
	CreatedAt time.Time
}

// RefundOutcome is what a provider says about a refund.
type RefundOutcome string

// The outcomes a provider reports.
const (
	// RefundSucceeded: the money went back to the customer.
	RefundSucceeded RefundOutcome = "succeeded"
	// RefundFailed: the provider refused; nothing was refunded (Failure
	// says why).
	RefundFailed RefundOutcome = "failed"
	// RefundPending: no answer yet (a timeout, an asynchronous provider, or
	// a key the provider has not seen); ask again with RefundStatus, after
	// PollAfter when it is set.
	RefundPending RefundOutcome = "pending"
)

// RefundResult is a provider's answer about a refund.
type RefundResult struct {
	Outcome RefundOutcome
	// ProviderReference is the provider's own id of the refund.
	ProviderReference string
	// Failure is set when Outcome is RefundFailed.
	Failure *Failure
	// PollAfter, when Pending: the outcome is expected this long from now.
	PollAfter time.Duration
}

// RefundAdapter sends refunds to one provider. Both calls are idempotent by
// req.IdempotencyKey and safe to call concurrently. An error means the
// outcome is unknown (the request may or may not have reached the
// provider); the refund stays pending and is asked about later.
type RefundAdapter interface {
	SendRefund(ctx context.Context, req RefundRequest) (RefundResult, error)
	RefundStatus(ctx context.Context, req RefundRequest) (RefundResult, error)
	// Remote reports whether calls leave the process: payd then records the
	// refund before calling, so a crash mid-call leaves a pending row to
	// reconcile. An in-process adapter without side effects is called first
	// and its answer written in the refund's own transaction.
	Remote() bool
	// RefundTimeout is the longest one call may take; a pending refund is
	// reconciled only after waiting longer than this.
	RefundTimeout() time.Duration
}

// RefundScenarioSelector is implemented by refund adapters that simulate
// named outcomes (the sandbox). Live adapters do not implement it, so in
// live mode the scenario header is ignored.
type RefundScenarioSelector interface {
	// SelectRefundScenario validates the X-Service-Scenario header of a
	// refund: "" for none, else a scenario the adapter offers for refunds;
	// anything else is a 400 invalid_scenario.
	SelectRefundScenario(header string) (string, error)
}

// ErrRefundRailUnavailable is returned by RefundRails.For when no adapter
// serves the provider in that mode.
var ErrRefundRailUnavailable = errors.New("providers: no refund rail for this provider and mode")

// RefundRails picks the refund adapter by the key's mode: the sandbox for
// test mode, the live adapters for live mode. Business logic asks it and
// never names either.
type RefundRails struct {
	// Sandbox serves every provider in test mode.
	Sandbox RefundAdapter
	// Live returns the live adapter of a merchant's provider, reading its
	// connection through rd; nil until live adapters are wired.
	Live func(ctx context.Context, rd Reader, merchantID, provider string) (RefundAdapter, error)
}

// For returns the adapter that sends a merchant's refunds on provider.
// A live rail's connection is read through rd: the caller's store.Work.
func (r *RefundRails) For(ctx context.Context, rd Reader, merchantID string, livemode bool, provider string) (RefundAdapter, error) {
	if !livemode {
		if r.Sandbox == nil {
			return nil, ErrRefundRailUnavailable
		}
		return r.Sandbox, nil
	}
	if r.Live == nil {
		return nil, ErrRefundRailUnavailable
	}
	a, err := r.Live(ctx, rd, merchantID, provider)
	if err != nil {
		return nil, errors.Join(ErrRefundRailUnavailable, err)
	}
	return a, nil
}
