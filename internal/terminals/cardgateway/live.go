package cardgateway

import (
	"context"
	"encoding/hex"
	"strings"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers/live"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/terminals"
)

// Live is a merchant's live card gateway: the card gateway calls of the
// provider protocol over its live wallet_a connection (live.CardGateway).
// The card number, expiry and cryptogram go into the authorise call's body
// and nowhere else; every answer carries brand and last four digits only.
type Live struct{ GW *live.CardGateway }

// Authorize sends the card to the gateway under the payment's reference. An
// error means the gateway did not act (503, 502) or its outcome is unknown
// (504: the payment stays authorizing for a retry or reconciliation).
func (l Live) Authorize(ctx context.Context, req terminals.AuthorizationRequest) (terminals.Authorization, error) {
	exp := req.Card.Expiry()
	cryptogram := req.Card.Cryptogram()
	body := protocol.CardAuthorizationRequest{Reference: req.Reference, AmountMinor: req.AmountMinor, Currency: req.Currency,
		Capture: !req.ManualCapture, EntryMode: string(req.Card.EntryMode()), TerminalID: req.TerminalID,
		Card: protocol.Card{Number: req.Card.PAN(), ExpMonth: int(exp.Month), ExpYear: exp.Year, Cryptogram: strings.ToUpper(hex.EncodeToString(cryptogram))}}
	clear(cryptogram)
	au, err := l.GW.Authorize(ctx, body)
	body.Card = protocol.Card{}
	if err != nil {
		return terminals.Authorization{}, err
	}
	return authorizationOf(au), nil
}

// LookupAuthorization asks the gateway about a payment's authorisation by
// its reference (reconciliation); it never authorises.
func (l Live) LookupAuthorization(ctx context.Context, reference string) (terminals.Authorization, bool, error) {
	au, found, err := l.GW.LookupAuthorization(ctx, reference)
	if err != nil || !found {
		return terminals.Authorization{}, found, err
	}
	return authorizationOf(au), true, nil
}

// Capture captures amountMinor of an authorisation held by manual capture.
func (l Live) Capture(ctx context.Context, reference string, amountMinor int64) error {
	_, err := l.GW.Capture(ctx, reference, amountMinor)
	return err
}

// Void releases an authorisation that was not captured.
func (l Live) Void(ctx context.Context, reference string) error {
	_, err := l.GW.Void(ctx, reference)
	return err
}

// authorizationOf reads the gateway's authorisation: authorized and
// captured are approvals, declined and voided are not.
func authorizationOf(au protocol.CardAuthorization) terminals.Authorization {
	out := terminals.Authorization{GatewayID: au.ID}
	switch au.Status {
	case protocol.AuthorizationAuthorized, protocol.AuthorizationCaptured:
		out.Approved, out.AuthCode = true, au.AuthCode
		if out.AuthCode == "" {
			out.AuthCode = "000000" // a gateway that approves without a code
		}
	default:
		out.DeclineCode, out.Message = "generic_decline", "The card was declined."
		if au.Failure != nil {
			if au.Failure.DeclineCode != "" {
				out.DeclineCode = clip(au.Failure.DeclineCode)
			}
			if au.Failure.Message != "" {
				out.Message = clip(au.Failure.Message)
			}
		}
	}
	return out
}

// clip bounds what a gateway says before payd stores it.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}

// Selector is the terminals.GatewaySelector: the sandbox in test mode; in
// live mode the merchant's live card gateway, found by Live (nil: none).
type Selector struct {
	Live func(ctx context.Context, merchantID string) (*live.CardGateway, error)
}

// Select returns the gateway of a merchant in a mode. Live mode without a
// live wallet_a connection is 503 card_gateway_unavailable; with one whose
// breaker is open, 503 provider_unavailable. Nothing is written before.
func (s Selector) Select(ctx context.Context, merchantID string, livemode bool) (terminals.Gateway, error) {
	if !livemode {
		return Sandbox{}, nil
	}
	if s.Live == nil {
		return nil, Unavailable
	}
	gw, err := s.Live(ctx, merchantID)
	if err != nil {
		if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound || isNotConnected(err) {
			return nil, Unavailable
		}
		return nil, err
	}
	return Live{GW: gw}, nil
}

// isNotConnected reports the live side's answer for a provider that is not
// connected (503 provider_unavailable wrapping a not-found).
func isNotConnected(err error) bool {
	e := errs.As(err)
	if e == nil || e.Err == nil {
		return false
	}
	inner := errs.As(e.Err)
	return inner != nil && inner.Kind == errs.KindNotFound
}
