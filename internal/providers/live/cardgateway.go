package live

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// CardGatewayProvider is the connection whose base URL serves the card
// gateway of live card-present payments: wallet_a acquires the cards (the
// provider card-present intents are recorded under).
const CardGatewayProvider = providers.WalletA

// CardGateway is one merchant's live card gateway: the card gateway calls of
// the provider protocol (docs/providers.md, "Card gateway") over the
// merchant's wallet_a connection, with its timeout, retries, breaker and
// slots. Every call carries an idempotency key derived from the terminal
// payment's reference, so a repeated call never authorises or captures
// twice. Card data goes into the authorise call's body and nowhere else:
// not into a log line, an error or a metric.
type CardGateway struct{ movement }

// CardGateway returns a merchant's live card gateway: 503
// provider_unavailable when wallet_a is not connected for live mode or its
// breaker is open (nothing is called).
func (c *Connections) CardGateway(ctx context.Context, merchantID string) (*CardGateway, error) {
	m, err := c.movement(ctx, nil, merchantID, CardGatewayProvider)
	if err != nil {
		return nil, err
	}
	return &CardGateway{m}, nil
}

// ErrCardOutcomeUnknown wraps the error of a card gateway call whose outcome
// is unknown: no answer in time, or the first call under its key still runs
// at the gateway. Nothing about it may be recorded as refused; ask the
// gateway with LookupAuthorization later.
var ErrCardOutcomeUnknown = errors.New("live: the card gateway's outcome is not known")

// cardTimeout is the 504 of a card gateway call whose outcome is unknown.
func cardTimeout(provider string) error {
	e := providerTimeout(provider)
	e.Message = provider + ": the card gateway did not answer in time; the outcome is not known yet"
	e.Err = ErrCardOutcomeUnknown
	return e
}

// AuthorizeKey is the idempotency key of a terminal payment's authorisation.
func AuthorizeKey(reference string) string { return reference + ":authorize" }

// Authorize asks the gateway to authorise (and with req.Capture capture) a
// card (POST /v1/card_authorizations under AuthorizeKey). A decline is an
// answer, not an error. An error wrapping ErrCardOutcomeUnknown means the
// gateway may have authorised; other errors mean it did not act (503
// breaker or slots, 502 after retries). A 4xx refusal of the request is a
// decline with decline_code processing_error.
func (g *CardGateway) Authorize(ctx context.Context, req protocol.CardAuthorizationRequest) (protocol.CardAuthorization, error) {
	resp, err := g.call(ctx, request{op: "card_authorize", method: http.MethodPost, path: "/v1/card_authorizations",
		idemKey: AuthorizeKey(req.Reference), body: req})
	switch {
	case errors.Is(err, errNoAnswer):
		return protocol.CardAuthorization{}, cardTimeout(g.provider)
	case err != nil:
		return protocol.CardAuthorization{}, err
	case resp.keyInUse():
		return protocol.CardAuthorization{}, cardTimeout(g.provider)
	case resp.status == http.StatusConflict:
		// duplicate_reference: the gateway holds an authorisation of this
		// reference (payd's key is derived from it, so it is this one).
		au, found, err := g.LookupAuthorization(ctx, req.Reference)
		if err != nil || !found {
			return protocol.CardAuthorization{}, cardTimeout(g.provider)
		}
		return au, nil
	case resp.status >= 400:
		e := resp.errorBody()
		return protocol.CardAuthorization{Reference: req.Reference, Status: protocol.AuthorizationDeclined,
			AmountMinor: req.AmountMinor, Currency: req.Currency,
			Failure: &protocol.Failure{Code: "card_declined", Message: "The card gateway refused the request (" + clip(e.Code) + ").",
				DeclineCode: "processing_error"}}, nil
	}
	return g.authorization(resp)
}

// LookupAuthorization asks the gateway about a terminal payment's
// authorisation by its reference (GET /v1/card_authorizations?reference=),
// never authorising: found is false when the gateway has no record of it.
func (g *CardGateway) LookupAuthorization(ctx context.Context, reference string) (protocol.CardAuthorization, bool, error) {
	resp, err := g.call(ctx, request{op: "card_status", method: http.MethodGet,
		path: "/v1/card_authorizations?reference=" + url.QueryEscape(reference)})
	switch {
	case errors.Is(err, errNoAnswer):
		return protocol.CardAuthorization{}, false, cardTimeout(g.provider)
	case err != nil:
		return protocol.CardAuthorization{}, false, err
	case resp.status == http.StatusNotFound:
		return protocol.CardAuthorization{}, false, nil
	case resp.status >= 400:
		return protocol.CardAuthorization{}, false, providerError(g.provider,
			"the card gateway refused a status query ("+clip(resp.errorBody().Code)+")", nil)
	}
	au, err := g.authorization(resp)
	return au, err == nil, err
}

// Capture captures amount of an authorised terminal payment
// (POST /v1/card_authorizations/{reference}/capture under
// "<reference>:capture"); the rest of the authorisation is released.
func (g *CardGateway) Capture(ctx context.Context, reference string, amount int64) (protocol.CardAuthorization, error) {
	return g.change(ctx, "card_capture", reference, "capture", protocol.CardCaptureRequest{AmountMinor: amount})
}

// Void releases an authorised terminal payment without capturing it
// (POST /v1/card_authorizations/{reference}/void under "<reference>:void").
func (g *CardGateway) Void(ctx context.Context, reference string) (protocol.CardAuthorization, error) {
	return g.change(ctx, "card_void", reference, "void", protocol.CardVoidRequest{})
}

// change is a capture or a void: the authorisation as it stands after it,
// or an error (504 wrapping ErrCardOutcomeUnknown when unknown, 502
// provider_error naming the gateway's code when it refused).
func (g *CardGateway) change(ctx context.Context, op, reference, verb string, body any) (protocol.CardAuthorization, error) {
	resp, err := g.call(ctx, request{op: op, method: http.MethodPost,
		path: "/v1/card_authorizations/" + url.PathEscape(reference) + "/" + verb, idemKey: reference + ":" + verb, body: body})
	switch {
	case errors.Is(err, errNoAnswer):
		return protocol.CardAuthorization{}, cardTimeout(g.provider)
	case err != nil:
		return protocol.CardAuthorization{}, err
	case resp.keyInUse():
		return protocol.CardAuthorization{}, cardTimeout(g.provider)
	case resp.status >= 400:
		e := resp.errorBody()
		return protocol.CardAuthorization{}, &errs.Error{Kind: errs.KindProvider, Code: "provider_error",
			Message: g.provider + ": the card gateway refused the " + verb + " (" + clip(e.Code) + ")"}
	}
	return g.authorization(resp)
}

func (g *CardGateway) authorization(resp response) (protocol.CardAuthorization, error) {
	var au protocol.CardAuthorization
	if err := resp.decode(&au); err != nil {
		return au, providerError(g.provider, "the card gateway's answer could not be read", nil)
	}
	return au, nil
}

// sendCardRefund sends a refund of a card-present payment through the card
// gateway (POST /v1/card_authorizations/{payment_ref}/refunds); its status
// is asked like any refund's.
func (a *refundAdapter) sendCardRefund(ctx context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	if req.PaymentRef == "" {
		return providers.RefundResult{Outcome: providers.RefundFailed, Failure: &providers.Failure{Code: "payment_not_found",
			Message: "the card-present payment has no authorisation reference at the card gateway"}}, nil
	}
	body := protocol.CardRefundRequest{Reference: req.IdempotencyKey, AmountMinor: req.Amount, Currency: req.Currency,
		CallbackURL: a.c.callbackURL(a.merchantID, a.provider)}
	resp, err := a.call(ctx, request{op: "card_refund", method: http.MethodPost,
		path: "/v1/card_authorizations/" + url.PathEscape(req.PaymentRef) + "/refunds", idemKey: req.IdempotencyKey, body: body})
	return answerOf(a.movement, refundOutcomes, resp, err, false)
}
