package sandbox

import (
	"context"
	"time"

	"github.com/payd/payd/internal/providers"
)

// PayoutRail is the sandbox's payout rail for every provider. Its answer
// depends only on the request's scenario, so sending
// the same payout twice answers the same outcome and pays once, as a real
// rail's idempotency key promises; it keeps no state and survives restarts.
//
// Outcomes by scenario:
//
//	success, otp_expired, partial_capture,   succeeded (a payout has no OTP
//	sandbox_webhook_fail, none               step and no capture)
//	insufficient_funds                       failed insufficient_funds
//	duplicate_msisdn                         failed wallet_locked
//	account_closed                           failed account_not_found
//	velocity_limit                           failed velocity_limit_exceeded
//	kyc_blocked                              held for compliance until the
//	                                         merchant releases it, then succeeded
//	network_timeout                          SendPayout waits TimeoutDelay and
//	                                         has no answer (unknown);
//	                                         PayoutStatus then says failed
//	                                         provider_timeout: the payout never
//	                                         reached the rail
type PayoutRail struct {
	// TimeoutDelay is how long a network_timeout send hangs
	// (PAYD_SANDBOX_TIMEOUT_DELAY).
	TimeoutDelay time.Duration
}

// NewPayoutRail returns the sandbox payout rail.
func NewPayoutRail(timeoutDelay time.Duration) *PayoutRail {
	return &PayoutRail{TimeoutDelay: timeoutDelay}
}

// AnswersInProcess says the sandbox answers at once, except for a
// network_timeout, which waits TimeoutDelay.
func (r *PayoutRail) AnswersInProcess(req providers.PayoutRequest) bool {
	return req.Scenario != providers.NetworkTimeout.Name
}

// SendPayout answers the payout's scenario.
func (r *PayoutRail) SendPayout(ctx context.Context, req providers.PayoutRequest) (providers.PayoutResult, error) {
	if req.Scenario == providers.NetworkTimeout.Name {
		t := time.NewTimer(r.TimeoutDelay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return providers.PayoutResult{}, ctx.Err()
		case <-t.C:
		}
		return providers.PayoutResult{Outcome: providers.PayoutUnknown}, nil
	}
	return r.outcome(req), nil
}

// PayoutStatus answers what became of an earlier send.
func (r *PayoutRail) PayoutStatus(ctx context.Context, req providers.PayoutRequest) (providers.PayoutResult, error) {
	if err := ctx.Err(); err != nil {
		return providers.PayoutResult{}, err
	}
	if req.Scenario == providers.NetworkTimeout.Name {
		return payoutFailed(req, "provider_timeout", "the provider did not answer in time; the payout was not made"), nil
	}
	return r.outcome(req), nil
}

// PayoutTimeout is the longest a sandbox call takes.
func (r *PayoutRail) PayoutTimeout() time.Duration { return r.TimeoutDelay + time.Second }

func (r *PayoutRail) outcome(req providers.PayoutRequest) providers.PayoutResult {
	switch req.Scenario {
	case providers.InsufficientFunds.Name:
		return payoutFailed(req, "insufficient_funds", "the provider's float is too low to pay this payout")
	case providers.DuplicateMSISDN.Name:
		return payoutFailed(req, "wallet_locked", "the recipient wallet is locked")
	case providers.AccountClosed.Name:
		return payoutFailed(req, "account_not_found", "the recipient account does not exist or is closed")
	case providers.VelocityLimit.Name:
		return payoutFailed(req, "velocity_limit_exceeded", "the recipient's daily velocity limit is exceeded")
	case providers.KYCBlocked.Name:
		if !req.ComplianceCleared {
			return providers.PayoutResult{Outcome: providers.PayoutHeld, ProviderReference: providerRef(req),
				Failure: &providers.Failure{Code: "kyc_blocked", Message: "the provider holds the payout for a compliance review"}}
		}
	}
	return providers.PayoutResult{Outcome: providers.PayoutSucceeded, ProviderReference: providerRef(req)}
}

func payoutFailed(req providers.PayoutRequest, code, msg string) providers.PayoutResult {
	return providers.PayoutResult{Outcome: providers.PayoutFailed, ProviderReference: providerRef(req),
		Failure: &providers.Failure{Code: code, Message: msg}}
}

// providerRef is the sandbox's id of a payout: stable per idempotency key.
func providerRef(req providers.PayoutRequest) string {
	return "sbx_" + req.Provider + "_" + req.IdempotencyKey
}
