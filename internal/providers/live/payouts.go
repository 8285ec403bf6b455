package live

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// payoutAdapter is one merchant's live payout rail at one provider.
type payoutAdapter struct{ movement }

// PayoutAdapter returns the live payout rail of a merchant's provider
// (providers.PayoutRails.Live), reading its connection through rd (see
// Lookup): 503 provider_unavailable when it is not connected or its breaker
// is open.
func (c *Connections) PayoutAdapter(ctx context.Context, rd providers.Reader, merchantID, provider string) (providers.PayoutAdapter, error) {
	m, err := c.movement(ctx, rd, merchantID, provider)
	if err != nil {
		return nil, err
	}
	return &payoutAdapter{m}, nil
}

// PayoutTimeout is the connection's timeout (a call with its retries never
// takes longer).
func (a *payoutAdapter) PayoutTimeout() time.Duration { return a.timeout }

// SendPayout sends the payout under its idempotency key (POST /v1/payouts).
// No answer in time is PayoutUnknown: the dispatcher asks the status later.
func (a *payoutAdapter) SendPayout(ctx context.Context, req providers.PayoutRequest) (providers.PayoutResult, error) {
	body := protocol.PayoutRequest{Reference: req.IdempotencyKey, AmountMinor: req.Amount, Currency: req.Currency,
		MSISDN: req.RecipientMSISDN, Account: req.RecipientAccount, Name: req.RecipientName, Description: req.Description,
		ComplianceCleared: req.ComplianceCleared, CallbackURL: a.c.callbackURL(a.merchantID, a.provider)}
	resp, err := a.call(ctx, request{op: "payout", method: http.MethodPost, path: "/v1/payouts", idemKey: req.IdempotencyKey, body: body})
	return answerOf(a.movement, payoutOutcomes, resp, err, false)
}

// PayoutStatus asks what became of a payout (GET /v1/payouts?reference=).
// A payout the provider never received is PayoutUnknown: the dispatcher
// sends it again under the same key.
func (a *payoutAdapter) PayoutStatus(ctx context.Context, req providers.PayoutRequest) (providers.PayoutResult, error) {
	resp, err := a.call(ctx, request{op: "payout_status", method: http.MethodGet, path: "/v1/payouts?reference=" + url.QueryEscape(req.IdempotencyKey)})
	return answerOf(a.movement, payoutOutcomes, resp, err, true)
}

var payoutOutcomes = outcomes[protocol.Payout, providers.PayoutResult]{what: "payout",
	unknown: providers.PayoutResult{Outcome: providers.PayoutUnknown},
	refused: func(f *providers.Failure) providers.PayoutResult {
		return providers.PayoutResult{Outcome: providers.PayoutFailed, Failure: f}
	},
	parsed: PayoutResult}

// PayoutResult maps a payout as the provider reports it (in an answer or a
// callback) to payd's PayoutResult.
func PayoutResult(po protocol.Payout) providers.PayoutResult {
	res := providers.PayoutResult{ProviderReference: po.ID}
	switch po.Status {
	case protocol.PayoutSucceeded:
		res.Outcome = providers.PayoutSucceeded
	case protocol.PayoutFailed, protocol.PayoutHeld:
		res.Outcome = providers.PayoutFailed
		if po.Status == protocol.PayoutHeld {
			res.Outcome = providers.PayoutHeld
		}
		f := po.Failure
		if f == nil {
			f = &protocol.Failure{Code: "provider_declined", Message: "The provider refused the payout."}
			if po.Status == protocol.PayoutHeld {
				f = &protocol.Failure{Code: "provider_compliance_hold", Message: "The provider holds the payout for a compliance review."}
			}
		}
		res.Failure = &providers.Failure{Code: clip(f.Code), Message: clip(f.Message)}
	default:
		res.Outcome = providers.PayoutUnknown
	}
	return res
}

// SettlementReport fetches a provider's settlement report of a UTC day
// (GET /v1/reports/settlement?date=).
func (c *Connections) SettlementReport(ctx context.Context, merchantID, provider, date string) (protocol.SettlementReport, error) {
	if err := c.Ready(ctx, merchantID, provider); err != nil {
		return protocol.SettlementReport{}, err
	}
	cl, err := c.client(ctx, merchantID, provider)
	if err != nil {
		return protocol.SettlementReport{}, err
	}
	resp, err := cl.do(ctx, request{op: "report", method: http.MethodGet, path: "/v1/reports/settlement?date=" + url.QueryEscape(date)})
	if errors.Is(err, errNoAnswer) {
		return protocol.SettlementReport{}, providerTimeout(provider)
	}
	if err != nil {
		return protocol.SettlementReport{}, err
	}
	if resp.status >= 400 {
		return protocol.SettlementReport{}, providerError(provider, "the provider refused the report request ("+clip(resp.errorBody().Code)+")", nil)
	}
	var rep protocol.SettlementReport
	if err := resp.decode(&rep); err != nil {
		return rep, providerError(provider, "the provider's report could not be read", nil)
	}
	return rep, nil
}
