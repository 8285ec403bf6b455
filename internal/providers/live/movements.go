package live

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/payd/payd/internal/providers"
)

// movement is one merchant's live rail at one provider for money payd sends
// out: payouts and refunds. Both are sent under an idempotency key that is
// also their reference, asked about by that reference, and answered the
// same way; payoutAdapter and refundAdapter add only their bodies and their
// result types.
type movement struct {
	c          *Connections
	merchantID string
	provider   string
	// conn is the connection read when the rail was asked for: its calls
	// read it no more (the caller's request may have its unit of work open
	// then).
	conn    Connection
	timeout time.Duration
}

// movement returns the merchant's rail at provider, reading its connection
// through rd (see Lookup): 503 provider_unavailable when it is not
// connected or its breaker is open.
func (c *Connections) movement(ctx context.Context, rd providers.Reader, merchantID, provider string) (movement, error) {
	conn, err := c.ready(ctx, rd, merchantID, provider)
	if err != nil {
		return movement{}, err
	}
	return movement{c: c, merchantID: merchantID, provider: provider, conn: conn, timeout: conn.Timeout}, nil
}

// call sends one request to the provider.
func (m movement) call(ctx context.Context, req request) (response, error) {
	return m.c.clientOf(m.conn, m.merchantID, m.provider).do(ctx, req)
}

// outcomes are the results an answer about a payout or a refund maps to.
type outcomes[T, R any] struct {
	what    string                     // "payout" or "refund", for messages
	unknown R                          // no answer yet: asked again later
	refused func(*providers.Failure) R // a 4xx: the provider refused
	parsed  func(T) R                  // a 2xx: the provider's object
}

// answerOf reads an answer about a payout or refund: no answer in time, a
// 409 (the first call under the key still runs) or, to a status query, a
// 404 (the provider never got it) are o.unknown; another 4xx is a refusal;
// a 2xx is the provider's object T.
func answerOf[T, R any](m movement, o outcomes[T, R], resp response, err error, statusQuery bool) (R, error) {
	var zero R
	switch {
	case errors.Is(err, errNoAnswer):
		return o.unknown, nil
	case err != nil:
		return zero, err
	case resp.status == http.StatusConflict, statusQuery && resp.status == http.StatusNotFound:
		return o.unknown, nil
	case resp.status >= 400:
		return o.refused(refusal(resp, o.what)), nil
	}
	var v T
	if err := resp.decode(&v); err != nil {
		return zero, providerError(m.provider, "the provider's answer could not be read", nil)
	}
	return o.parsed(v), nil
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
