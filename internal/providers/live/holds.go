package live

import (
	"context"
	"errors"
	"fmt"

	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// A live card-present payment taken with capture_method manual is an
// authorisation held at the merchant's card gateway (wallet_a) under the
// terminal payment's reference. The payments service captures or releases
// it through these methods of wallet_a's payment adapter (the
// providers.AuthorizationSettler of its card-present intents), which call
// the card gateway's capture and void under "<tpay_id>:capture" and
// "<tpay_id>:void": a repeat after a lost answer gets the gateway's first
// answer again and never captures twice.

// SettlesHolds: wallet_a's card-present intents, whose authorisations the
// card gateway holds. (Hosted card page payments are captured at once.)
func (a *paymentAdapter) SettlesHolds(p providers.Payment) bool {
	return a.provider == CardGatewayProvider && p.Flow == providers.FlowCardPresent && p.ProviderRef != ""
}

// CaptureHold captures amountMinor of the payment's authorisation.
func (a *paymentAdapter) CaptureHold(ctx context.Context, p providers.Payment, amountMinor int64) (providers.HeldAuthorization, error) {
	gw, err := a.cardGateway(ctx, p)
	if err != nil {
		return providers.HeldAuthorization{}, err
	}
	return heldOf(gw.Capture(ctx, p.ProviderRef, amountMinor))
}

// VoidHold releases the payment's authorisation.
func (a *paymentAdapter) VoidHold(ctx context.Context, p providers.Payment) (providers.HeldAuthorization, error) {
	gw, err := a.cardGateway(ctx, p)
	if err != nil {
		return providers.HeldAuthorization{}, err
	}
	return heldOf(gw.Void(ctx, p.ProviderRef))
}

// LookupHold asks the gateway about the authorisation by its reference.
func (a *paymentAdapter) LookupHold(ctx context.Context, p providers.Payment) (providers.HeldAuthorization, bool, error) {
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
