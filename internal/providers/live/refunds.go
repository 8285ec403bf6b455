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

// refundAdapter is one merchant's live refund rail at one provider.
type refundAdapter struct {
	c          *Connections
	merchantID string
	provider   string
	timeout    time.Duration
}

// RefundAdapter returns the live refund rail of a merchant's provider
// (providers.RefundRails.Live): 503 provider_unavailable when it is not
// connected or its breaker is open.
func (c *Connections) RefundAdapter(ctx context.Context, merchantID, provider string) (providers.RefundAdapter, error) {
	if err := c.Ready(ctx, merchantID, provider); err != nil {
		return nil, err
	}
	conn, err := c.connection(ctx, merchantID, provider)
	if err != nil {
		return nil, err
	}
	return &refundAdapter{c: c, merchantID: merchantID, provider: provider, timeout: conn.Timeout}, nil
}

// Remote is true: payd records the refund pending before calling.
func (a *refundAdapter) Remote() bool { return true }

// RefundTimeout is the connection's timeout.
func (a *refundAdapter) RefundTimeout() time.Duration { return a.timeout }

// SendRefund sends the refund under its id (POST /v1/refunds). No answer in
// time is RefundPending: reconciliation asks later.
func (a *refundAdapter) SendRefund(ctx context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	cl, err := a.c.client(ctx, a.merchantID, a.provider)
	if err != nil {
		return providers.RefundResult{}, err
	}
	body := protocol.RefundRequest{Reference: req.IdempotencyKey, PaymentReference: req.PaymentIntent, AmountMinor: req.Amount,
		Currency: req.Currency, CallbackURL: a.c.callbackURL(a.merchantID, a.provider)}
	resp, err := cl.do(ctx, request{op: "refund", method: http.MethodPost, path: "/v1/refunds", idemKey: req.IdempotencyKey, body: body})
	return a.result(resp, err)
}

// RefundStatus asks what became of a refund (GET /v1/refunds?reference=).
// A refund the provider never received is RefundPending: reconciliation
// sends it again under the same key.
func (a *refundAdapter) RefundStatus(ctx context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	cl, err := a.c.client(ctx, a.merchantID, a.provider)
	if err != nil {
		return providers.RefundResult{}, err
	}
	resp, err := cl.do(ctx, request{op: "refund_status", method: http.MethodGet, path: "/v1/refunds?reference=" + url.QueryEscape(req.IdempotencyKey)})
	if err == nil && resp.status == http.StatusNotFound {
		return providers.RefundResult{Outcome: providers.RefundPending}, nil
	}
	return a.result(resp, err)
}

func (a *refundAdapter) result(resp response, err error) (providers.RefundResult, error) {
	if errors.Is(err, errNoAnswer) {
		return providers.RefundResult{Outcome: providers.RefundPending}, nil
	}
	if err != nil {
		return providers.RefundResult{}, err
	}
	if resp.status >= 400 {
		if resp.status == http.StatusConflict {
			return providers.RefundResult{Outcome: providers.RefundPending}, nil
		}
		return providers.RefundResult{Outcome: providers.RefundFailed, Failure: refusal(resp, "refund")}, nil
	}
	var rf protocol.Refund
	if err := resp.decode(&rf); err != nil {
		return providers.RefundResult{}, providerError(a.provider, "the provider's answer could not be read", nil)
	}
	return RefundResult(rf), nil
}

// RefundResult maps a refund as the provider reports it (in an answer or a
// callback) to payd's RefundResult.
func RefundResult(rf protocol.Refund) providers.RefundResult {
	res := providers.RefundResult{ProviderReference: rf.ID}
	switch rf.Status {
	case protocol.RefundSucceeded:
		res.Outcome = providers.RefundSucceeded
	case protocol.RefundFailed:
		res.Outcome = providers.RefundFailed
		f := rf.Failure
		if f == nil {
			f = &protocol.Failure{Code: "provider_declined", Message: "The provider refused the refund."}
		}
		res.Failure = &providers.Failure{Code: clip(f.Code), Message: clip(f.Message)}
	default:
		res.Outcome = providers.RefundPending
	}
	return res
}
