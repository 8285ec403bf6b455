package terminals

import (
	"context"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/payments"
)

// Gateway authorises card-present payments with the card network. The sandbox
// and a live acquirer are implementations chosen by the key's mode (see
// GatewaySelector); the pipeline never knows which one it talks to.
type Gateway interface {
	// Authorize asks the issuer to approve the payment. A decline is an
	// Authorization with Approved false, not an error; an error means the
	// outcome is unknown (timeout, gateway down) and nothing was recorded.
	Authorize(ctx context.Context, req AuthorizationRequest) (Authorization, error)
}

// AuthorizationRequest is what a card gateway receives. Card carries the PAN,
// expiry and cryptogram; implementations must not log, store or echo them.
type AuthorizationRequest struct {
	// Reference is the terminal payment's id (tpay_...): a gateway must treat
	// a repeated reference as the same authorisation, so a retried request
	// never authorises twice.
	Reference   string
	MerchantID  string
	TerminalID  string
	Card        card.Read
	AmountMinor int64
	Currency    string
}

// Authorization is the issuer's answer.
type Authorization struct {
	Approved    bool
	AuthCode    string // on approval, printed on the receipt
	DeclineCode string // on decline, e.g. generic_decline
	Message     string // on decline, for last_error.message
}

// InProcess is implemented by a gateway that answers without leaving the
// process (the sandbox). Before asking any other gateway, a payment commits
// what it wrote so far with a recovery point on its Idempotency-Key, so a
// crash during the call cannot lose the record of a card sent to the network.
type InProcess interface{ InProcess() bool }

// GatewaySelector returns the gateway for a mode, or an error (503) when the
// mode has none; it is called before anything is written.
type GatewaySelector func(livemode bool) (Gateway, error)

// IntentRecorder records a card-present outcome as a payment intent. The
// payments service implements it: a succeeded intent with
// payment_method_details.card_present, its ledger credit and
// payment_intent.succeeded in one transaction, or a canceled intent with
// last_error on a decline; idempotent by in.IdempotencyKey.
type IntentRecorder interface {
	RecordCardPresent(ctx context.Context, p auth.Principal, in payments.CardPresent) (payments.Intent, error)
}
