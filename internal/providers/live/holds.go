package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// A live wallet_a payment taken with capture_method manual is an
// authorisation held at the provider: a hosted card page payment initiated
// with capture false (the provider's payment authorized), or a card-present
// payment authorised at the card gateway under the terminal payment's
// reference. The payments service captures or releases it through these
// methods of wallet_a's payment adapter (its providers.AuthorizationSettler),
// which call POST /v1/payments/{id}/capture or /void under "<pi_id>:capture"
// and "<pi_id>:void", or the card gateway's capture and void under
// "<tpay_id>:capture" and "<tpay_id>:void": a repeat after a lost answer
// gets the provider's first answer again and never captures twice.

// HoldsAuthorizations: wallet_a's hosted card page payments can be held
// (initiated with capture false); payd refuses capture_method manual on
// every other rail and mode before it asks.
func (a *paymentAdapter) HoldsAuthorizations() bool { return a.provider == CardGatewayProvider }

// SettlesHolds: wallet_a's card-present intents, whose authorisations the
// card gateway holds, and its hosted card page payments initiated with
// capture false, held as payments (status authorized).
func (a *paymentAdapter) SettlesHolds(p providers.Payment) bool {
	if a.provider != CardGatewayProvider {
		return false
	}
	return p.Flow == providers.FlowCardPresent && p.ProviderRef != "" || p.Flow == providers.FlowCardPage
}

// CaptureHold captures amountMinor of the payment's authorisation.
func (a *paymentAdapter) CaptureHold(ctx context.Context, p providers.Payment, amountMinor int64) (providers.HeldAuthorization, error) {
	if p.Flow == providers.FlowCardPage {
		return a.changePayment(ctx, p, "capture", protocol.PaymentCaptureRequest{AmountMinor: amountMinor})
	}
	gw, err := a.cardGateway(ctx, p)
	if err != nil {
		return providers.HeldAuthorization{}, err
	}
	return heldOf(gw.Capture(ctx, p.ProviderRef, amountMinor))
}

// VoidHold releases the payment's authorisation.
func (a *paymentAdapter) VoidHold(ctx context.Context, p providers.Payment) (providers.HeldAuthorization, error) {
	if p.Flow == providers.FlowCardPage {
		return a.changePayment(ctx, p, "void", protocol.PaymentVoidRequest{})
	}
	gw, err := a.cardGateway(ctx, p)
	if err != nil {
		return providers.HeldAuthorization{}, err
	}
	return heldOf(gw.Void(ctx, p.ProviderRef))
}

// changePayment captures or voids a held hosted card page payment
// (POST /v1/payments/{id}/capture or /void under "<pi_id>:capture" or
// "<pi_id>:void"): the payment as it stands after it.
func (a *paymentAdapter) changePayment(ctx context.Context, p providers.Payment, verb string, body any) (providers.HeldAuthorization, error) {
	cl, err := a.c.client(ctx, p.MerchantID, a.provider)
	if err != nil {
		return providers.HeldAuthorization{}, err
	}
	resp, err := cl.do(ctx, request{op: "payment_" + verb, method: http.MethodPost,
		path: "/v1/payments/" + url.PathEscape(a.ref(p)) + "/" + verb, idemKey: p.ID + ":" + verb, body: body})
	switch {
	case errors.Is(err, errNoAnswer):
		return providers.HeldAuthorization{}, fmt.Errorf("%w: %w", providers.ErrNoAnswer, providerTimeout(a.provider))
	case err != nil:
		return providers.HeldAuthorization{}, err
	case resp.keyInUse():
		return providers.HeldAuthorization{}, fmt.Errorf("%w: %w", providers.ErrNoAnswer, providerTimeout(a.provider))
	case resp.status >= 400:
		return providers.HeldAuthorization{}, &errs.Error{Kind: errs.KindProvider, Code: "provider_error",
			Message: a.provider + ": the provider refused the " + verb + " (" + clip(resp.errorBody().Code) + ")"}
	}
	return a.heldPayment(resp)
}

// heldPayment reads a payment answer as a held authorisation's state.
func (a *paymentAdapter) heldPayment(resp response) (providers.HeldAuthorization, error) {
	var pp protocol.Payment
	if err := resp.decode(&pp); err != nil {
		return providers.HeldAuthorization{}, providerError(a.provider, "the provider's answer could not be read", nil)
	}
	switch pp.Status {
	case protocol.StatusAuthorized:
		return providers.HeldAuthorization{Status: providers.Held}, nil
	case protocol.StatusSucceeded:
		return providers.HeldAuthorization{Status: providers.Captured, CapturedMinor: pp.CapturedMinor}, nil
	case protocol.StatusFailed:
		return providers.HeldAuthorization{Status: providers.Released}, nil
	}
	return providers.HeldAuthorization{}, providerError(a.provider, "the provider reports a held payment "+clip(pp.Status), nil)
}

// LookupHold asks the gateway about the authorisation by its reference.
func (a *paymentAdapter) LookupHold(ctx context.Context, p providers.Payment) (providers.HeldAuthorization, bool, error) {
	if p.Flow == providers.FlowCardPage {
		cl, err := a.c.client(ctx, p.MerchantID, a.provider)
		if err != nil {
			return providers.HeldAuthorization{}, false, err
		}
		resp, err := cl.do(ctx, request{op: "status", method: http.MethodGet, path: "/v1/payments?reference=" + url.QueryEscape(p.ID)})
		switch {
		case errors.Is(err, errNoAnswer):
			return providers.HeldAuthorization{}, false, fmt.Errorf("%w: %w", providers.ErrNoAnswer, providerTimeout(a.provider))
		case err != nil:
			return providers.HeldAuthorization{}, false, err
		case resp.status == http.StatusNotFound:
			return providers.HeldAuthorization{}, false, nil
		case resp.status >= 400:
			return providers.HeldAuthorization{}, false, providerError(a.provider, "the provider refused a status query ("+clip(resp.errorBody().Code)+")", nil)
		}
		h, err := a.heldPayment(resp)
		return h, err == nil, err
	}
	gw, err := a.cardGateway(ctx, p)
	if err != nil {
		return providers.HeldAuthorization{}, false, err
	}
	au, found, err := gw.LookupAuthorization(ctx, p.ProviderRef)
	if err != nil || !found {
		return providers.HeldAuthorization{}, found, unknownAsNoAnswer(err)
	}
	h, err := heldOf(au, nil)
	return h, err == nil, err
}

func (a *paymentAdapter) cardGateway(ctx context.Context, p providers.Payment) (*CardGateway, error) {
	if !a.SettlesHolds(p) {
		return nil, providers.ErrUnsupported
	}
	return a.c.CardGateway(ctx, p.MerchantID)
}

// heldOf reads a capture's, void's or status query's answer.
func heldOf(au protocol.CardAuthorization, err error) (providers.HeldAuthorization, error) {
	if err != nil {
		return providers.HeldAuthorization{}, unknownAsNoAnswer(err)
	}
	switch au.Status {
	case protocol.AuthorizationAuthorized:
		return providers.HeldAuthorization{Status: providers.Held}, nil
	case protocol.AuthorizationCaptured:
		return providers.HeldAuthorization{Status: providers.Captured, CapturedMinor: au.CapturedMinor}, nil
	case protocol.AuthorizationVoided, protocol.AuthorizationDeclined:
		return providers.HeldAuthorization{Status: providers.Released}, nil
	}
	return providers.HeldAuthorization{}, providerError(CardGatewayProvider, "the card gateway reports an authorisation status payd does not know", nil)
}

// unknownAsNoAnswer makes a card gateway call whose outcome is unknown
// (ErrCardOutcomeUnknown) also match providers.ErrNoAnswer, keeping its 504.
func unknownAsNoAnswer(err error) error {
	if err != nil && errors.Is(err, ErrCardOutcomeUnknown) {
		return fmt.Errorf("%w: %w", providers.ErrNoAnswer, err)
	}
	return err
}
