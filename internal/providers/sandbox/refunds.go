package sandbox

import (
	"context"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
)

// RefundRail is the sandbox's refund side for every provider (card-present
// payments included). Like the payout rail it keeps no state: its answer
// depends only on the refund's scenario and age, so asking twice answers
// the same and it survives restarts.
//
// Outcomes by scenario (the X-Service-Scenario header of the create):
//
//	none, success      succeeded at once
//	account_closed     failed account_not_found
//	network_timeout    pending; succeeded once PushDelay has passed since
//	                   the refund was made (payd asks again then)
type RefundRail struct {
	// PushDelay is how long a network_timeout refund stays pending
	// (PAYD_SANDBOX_PUSH_DELAY).
	PushDelay time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

var (
	_ providers.RefundAdapter          = (*RefundRail)(nil)
	_ providers.RefundScenarioSelector = (*RefundRail)(nil)
)

// NewRefundRail returns the sandbox refund rail.
func NewRefundRail(pushDelay time.Duration) *RefundRail {
	return &RefundRail{PushDelay: pushDelay, Now: time.Now}
}

// refundScenarios are the scenarios a refund may name.
var refundScenarios = []providers.Scenario{providers.Success, providers.AccountClosed, providers.NetworkTimeout}

// SelectRefundScenario accepts success, account_closed and network_timeout.
func (r *RefundRail) SelectRefundScenario(header string) (string, error) {
	if header == "" {
		return "", nil
	}
	sc, ok := providers.ScenarioByName(header)
	if !ok {
		return "", errs.Invalid("X-Service-Scenario", "invalid_scenario", "unknown sandbox scenario %q", header)
	}
	for _, s := range refundScenarios {
		if s == sc {
			return sc.Name, nil
		}
	}
	return "", errs.Invalid("X-Service-Scenario", "invalid_scenario",
		"the sandbox scenario %s is not offered for refunds (success, account_closed, network_timeout)", sc.Name)
}

// SendRefund answers the refund's scenario.
func (r *RefundRail) SendRefund(ctx context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	return r.RefundStatus(ctx, req)
}

// RefundStatus answers what became of a refund.
func (r *RefundRail) RefundStatus(ctx context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	if err := ctx.Err(); err != nil {
		return providers.RefundResult{}, err
	}
	ref := "sbx_re_" + req.Provider + "_" + req.IdempotencyKey
	switch req.Scenario {
	case providers.AccountClosed.Name:
		return providers.RefundResult{Outcome: providers.RefundFailed, ProviderReference: ref,
			Failure: &providers.Failure{Code: "account_not_found", Message: "the customer's account does not exist or is closed"}}, nil
	case providers.NetworkTimeout.Name:
		now := time.Now
		if r.Now != nil {
			now = r.Now
		}
		if left := req.CreatedAt.Add(r.PushDelay).Sub(now()); left > 0 {
			return providers.RefundResult{Outcome: providers.RefundPending, ProviderReference: ref, PollAfter: left}, nil
		}
	}
	return providers.RefundResult{Outcome: providers.RefundSucceeded, ProviderReference: ref}, nil
}

// Remote is false: the sandbox runs in process and has no side effects.
func (r *RefundRail) Remote() bool { return false }

// RefundTimeout is the longest a sandbox call takes.
func (r *RefundRail) RefundTimeout() time.Duration { return time.Second }
