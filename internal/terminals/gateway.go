package terminals

import (
	"context"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
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
	// ManualCapture asks for an authorisation held until Capture or Void;
	// false (every card-present payment today) captures at once.
	ManualCapture bool
}

// Authorization is the issuer's answer.
type Authorization struct {
	Approved    bool
	AuthCode    string // on approval, printed on the receipt
	DeclineCode string // on decline, e.g. generic_decline
	Message     string // on decline, for last_error.message
	// GatewayID is the gateway's own id of the authorisation, when it has one.
	GatewayID string
}

// AuthorizationLookup is implemented by a gateway that leaves the process:
// reconciliation asks it about a terminal payment whose authorisation got
// no answer, by the payment's reference, and never authorises again. found
// is false when the gateway has no record of the reference; an error means
// it could not be asked.
type AuthorizationLookup interface {
	LookupAuthorization(ctx context.Context, reference string) (auth Authorization, found bool, err error)
}

// Settler is implemented by a gateway whose authorisations can be captured
// later or released (manual capture): by the terminal payment's reference,
// each idempotent at the gateway.
type Settler interface {
	// Capture captures amountMinor (at most the authorised amount) of an
	// authorisation; the rest is released.
	Capture(ctx context.Context, reference string, amountMinor int64) error
	// Void releases an authorisation that was not captured.
	Void(ctx context.Context, reference string) error
}

// InProcess is implemented by a gateway that answers without leaving the
// process (the sandbox). Before asking any other gateway, a payment commits
// what it wrote so far with a recovery point on its Idempotency-Key, so a
// crash during the call cannot lose the record of a card sent to the network.
type InProcess interface{ InProcess() bool }

// GatewaySelector returns a merchant's gateway for a mode, or an error (503)
// when there is none (live mode: no live card gateway connection); it is
// called before anything is written.
type GatewaySelector func(ctx context.Context, merchantID string, livemode bool) (Gateway, error)

// IntentRecorder records a card-present outcome as a payment intent. The
// payments service implements it: a succeeded intent with
// payment_method_details.card_present, its ledger credit and
// payment_intent.succeeded in one transaction, or a canceled intent with
// last_error on a decline; idempotent by in.IdempotencyKey.
type IntentRecorder interface {
	RecordCardPresent(ctx context.Context, cl store.Claim, p auth.Principal, in payments.CardPresent) (payments.Intent, error)
}
