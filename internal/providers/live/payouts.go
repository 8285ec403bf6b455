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
type payoutAdapter struct {
	c          *Connections
	merchantID string
	provider   string
	timeout    time.Duration
}

// PayoutAdapter returns the live payout rail of a merchant's provider
// (providers.PayoutRails.Live): 503 provider_unavailable when it is not
// connected or its breaker is open.
func (c *Connections) PayoutAdapter(ctx context.Context, merchantID, provider string) (providers.PayoutAdapter, error) {
	if err := c.Ready(ctx, merchantID, provider); err != nil {
		return nil, err
	}
	conn, err := c.connection(ctx, merchantID, provider)
	if err != nil {
		return nil, err
	}
	return &payoutAdapter{c: c, merchantID: merchantID, provider: provider, timeout: conn.Timeout}, nil
}

// PayoutTimeout is the connection's timeout (a call with its retries never
// takes longer).
func (a *payoutAdapter) PayoutTimeout() time.Duration { return a.timeout }

// SendPayout sends the payout under its idempotency key (POST /v1/payouts).
// No answer in time is PayoutUnknown: the dispatcher asks the status later.
func (a *payoutAdapter) SendPayout(ctx context.Context, req providers.PayoutRequest) (providers.PayoutResult, error) {
	cl, err := a.c.client(ctx, a.merchantID, a.provider)
	if err != nil {
		return providers.PayoutResult{}, err
	}
	body := protocol.PayoutRequest{Reference: req.IdempotencyKey, AmountMinor: req.Amount, Currency: req.Currency,
		MSISDN: req.RecipientMSISDN, Account: req.RecipientAccount, Name: req.RecipientName, Description: req.Description,
		ComplianceCleared: req.ComplianceCleared, CallbackURL: a.c.callbackURL(a.merchantID, a.provider)}
	resp, err := cl.do(ctx, request{op: "payout", method: http.MethodPost, path: "/v1/payouts", idemKey: req.IdempotencyKey, body: body})
	return a.result(resp, err)
}

// PayoutStatus asks what became of a payout (GET /v1/payouts?reference=).
// A payout the provider never received is PayoutUnknown: the dispatcher
// sends it again under the same key.
func (a *payoutAdapter) PayoutStatus(ctx context.Context, req providers.PayoutRequest) (providers.PayoutResult, error) {
	cl, err := a.c.client(ctx, a.merchantID, a.provider)
	if err != nil {
		return providers.PayoutResult{}, err
	}
	resp, err := cl.do(ctx, request{op: "payout_status", method: http.MethodGet, path: "/v1/payouts?reference=" + url.QueryEscape(req.IdempotencyKey)})
	if err == nil && resp.status == http.StatusNotFound {
		return providers.PayoutResult{Outcome: providers.PayoutUnknown}, nil
	}
	return a.result(resp, err)
}

func (a *payoutAdapter) result(resp response, err error) (providers.PayoutResult, error) {
	if errors.Is(err, errNoAnswer) {
		return providers.PayoutResult{Outcome: providers.PayoutUnknown}, nil
	}
	if err != nil {
		return providers.PayoutResult{}, err
	}
	if resp.status >= 400 {
		if resp.status == http.StatusConflict {
			return providers.PayoutResult{Outcome: providers.PayoutUnknown}, nil
		}
		return providers.PayoutResult{Outcome: providers.PayoutFailed, Failure: refusal(resp, "payout")}, nil
	}
	var po protocol.Payout
	if err := resp.decode(&po); err != nil {
		return providers.PayoutResult{}, providerError(a.provider, "the provider's answer could not be read", nil)
	}
	return PayoutResult(po), nil
}

// refusal is the failure a 4xx answer reports about a payout or a refund
// (what), with a generic code and message where the provider gave none.
func refusal(resp response, what string) *providers.Failure {
	e := resp.errorBody()
	if e.Code == "" {
		e.Code = "provider_declined"
	}
	if e.Message == "" {
		e.Message = "The provider refused the " + what + "."
	}
	return &providers.Failure{Code: clip(e.Code), Message: clip(e.Message)}
}

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
