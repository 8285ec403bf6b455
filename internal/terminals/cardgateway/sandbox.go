// Package cardgateway holds the card-present gateways the terminals service
// talks to through terminals.Gateway: the sandbox issuer simulator for test
// mode, the live card gateway of a merchant's provider connection (live.go),
// and the answer live mode gets while none is connected.
package cardgateway

import (
	"context"
	"crypto/sha256"
	"encoding/base32"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/terminals"
)

// The sandbox test cards; every other valid card is approved.
const (
	CardApproved = "4242424242424242"
	CardDeclined = "4000000000000002"
	// Card3DS asks for 3-D Secure online. 3-D Secure is a card-not-present
	// check: a chip read with its cryptogram is the strong authentication of a
	// card-present payment, so the sandbox approves this card at a terminal.
	Card3DS = "4000000000003220"
)

// DeclineGeneric is the decline code of the declined test card.
const DeclineGeneric = "generic_decline"

// Sandbox is the test-mode card gateway: it decides by card number, never
// reaches a network, and keeps no card data.
type Sandbox struct{}

// InProcess says the sandbox answers without leaving the process.
func (Sandbox) InProcess() bool { return true }

// Authorize approves every card but CardDeclined, with an authorisation code
// derived from the request's reference, so a retried reference gets the same
// code as a real gateway's idempotent retry would.
func (Sandbox) Authorize(ctx context.Context, req terminals.AuthorizationRequest) (terminals.Authorization, error) {
	if err := ctx.Err(); err != nil {
		return terminals.Authorization{}, err
	}
	if req.Card.PAN() == CardDeclined {
		return terminals.Authorization{DeclineCode: DeclineGeneric, Message: "The card was declined."}, nil
	}
	return terminals.Authorization{Approved: true, AuthCode: authCode(req.Reference)}, nil
}

// authCode is a six-character authorisation code (digits and capitals, as
// printed on receipts) derived from the reference.
func authCode(reference string) string {
	sum := sha256.Sum256([]byte("payd sandbox auth code\x00" + reference))
	return base32.StdEncoding.EncodeToString(sum[:])[:6]
}

// Unavailable is the answer of a live payment while the merchant has no
// live card gateway connection: 503 before anything is written.
var Unavailable = &errs.Error{Kind: errs.KindUnavailable, Code: "card_gateway_unavailable",
	Message: "no live card gateway is connected for this merchant (connect wallet_a, the card acquirer, for live mode); live terminal payments cannot be authorised"}

// Select is the terminals.GatewaySelector of a deployment without live card
// gateways: the sandbox in test mode, 503 card_gateway_unavailable in live
// mode.
func Select(ctx context.Context, merchantID string, livemode bool) (terminals.Gateway, error) {
	return Selector{}.Select(ctx, merchantID, livemode)
}
