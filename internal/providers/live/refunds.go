package live

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// refundAdapter is one merchant's live refund rail at one provider.
type refundAdapter struct{ movement }

// RefundAdapter returns the live refund rail of a merchant's provider
// (providers.RefundRails.Live), reading its connection through rd (see
// Lookup): 503 provider_unavailable when it is not connected or its breaker
// is open.
func (c *Connections) RefundAdapter(ctx context.Context, rd providers.Reader, merchantID, provider string) (providers.RefundAdapter, error) {
	m, err := c.movement(ctx, rd, merchantID, provider)
	if err != nil {
		return nil, err
	}
	return &refundAdapter{m}, nil
}

// Remote is true: payd records the refund pending before calling.
func (a *refundAdapter) Remote() bool { return true }

// RefundTimeout is the connection's timeout.
func (a *refundAdapter) RefundTimeout() time.Duration { return a.timeout }

// SendRefund sends the refund under its id (POST /v1/refunds). No answer in
// time is RefundPending: reconciliation asks later.
// A refund of a card-present payment goes through the card gateway's refund
// call instead, against the terminal payment's authorisation.
func (a *refundAdapter) SendRefund(ctx context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	if req.CardPresent {
		return a.sendCardRefund(ctx, req)
	}
	body := protocol.RefundRequest{Reference: req.IdempotencyKey, PaymentReference: req.PaymentIntent, AmountMinor: req.Amount,
		Currency: req.Currency, CallbackURL: a.c.callbackURL(a.merchantID, a.provider)}
	resp, err := a.call(ctx, request{op: "refund", method: http.MethodPost, path: "/v1/refunds", idemKey: req.IdempotencyKey, body: body})
	return answerOf(a.movement, refundOutcomes, resp, err, false)
}

// RefundStatus asks what became of a refund (GET /v1/refunds?reference=).
// A refund the provider never received is RefundPending: reconciliation
// sends it again under the same key.
func (a *refundAdapter) RefundStatus(ctx context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	resp, err := a.call(ctx, request{op: "refund_status", method: http.MethodGet, path: "/v1/refunds?reference=" + url.QueryEscape(req.IdempotencyKey)})
	return answerOf(a.movement, refundOutcomes, resp, err, true)
}

var refundOutcomes = outcomes[protocol.Refund, providers.RefundResult]{what: "refund",
	unknown: providers.RefundResult{Outcome: providers.RefundPending},
	refused: func(f *providers.Failure) providers.RefundResult {
		return providers.RefundResult{Outcome: providers.RefundFailed, Failure: f}
	},
	parsed: RefundResult}

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
