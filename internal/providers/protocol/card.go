package protocol

import (
	"log/slog"
	"time"
)

// The card gateway: card-present authorisations (docs/providers.md, "Card
// gateway"). A terminal's card, decrypted by payd, is sent once in
// CardAuthorizationRequest.Card; everything the gateway answers carries only
// the card's brand and last four digits.

// Card authorisation statuses.
const (
	// AuthorizationAuthorized: approved and held, not captured yet (the
	// request asked for no capture). Capture or void it.
	AuthorizationAuthorized = "authorized"
	// AuthorizationCaptured: approved and captured; refunds apply to it.
	AuthorizationCaptured = "captured"
	// AuthorizationDeclined: the issuer refused (Failure says why). Final.
	AuthorizationDeclined = "declined"
	// AuthorizationVoided: an authorisation released without capture. Final.
	AuthorizationVoided = "voided"
)

// CardAuthorizationRequest asks the issuer to approve a card-present
// payment: POST {base_url}/v1/card_authorizations.
type CardAuthorizationRequest struct {
	// Reference is payd's id of the terminal payment (tpay_...): unique per
	// account; the gateway finds the authorisation by it.
	Reference   string `json:"reference"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	// Capture captures the authorised amount at once (payd's automatic
	// capture); false holds it until a capture or a void.
	Capture bool `json:"capture"`
	// EntryMode is how the card was read: chip or contactless.
	EntryMode  string `json:"entry_mode"`
	TerminalID string `json:"terminal_id"`
	Card       Card   `json:"card"`
}

// Card is the card data of one authorisation: the only place the card
// number leaves payd. It never prints, logs or appears in an error: String,
// GoString and LogValue show its brand-free redaction.
type Card struct {
	Number   string `json:"number"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
	// Cryptogram is the chip's application cryptogram (tag 9F26), 16 hex digits.
	Cryptogram string `json:"cryptogram"`
}

// String hides the card data.
func (Card) String() string { return "Card(redacted)" }

// GoString hides the card data from %#v.
func (c Card) GoString() string { return c.String() }

// LogValue hides the card data from slog.
func (c Card) LogValue() slog.Value { return slog.StringValue(c.String()) }

// String hides the card data of a request printed whole.
func (r CardAuthorizationRequest) String() string {
	return "CardAuthorizationRequest{" + r.Reference + " " + r.Currency + " Card(redacted)}"
}

// GoString hides the card data from %#v.
func (r CardAuthorizationRequest) GoString() string { return r.String() }

// LogValue hides the card data from slog.
func (r CardAuthorizationRequest) LogValue() slog.Value { return slog.StringValue(r.String()) }

// CardAuthorization is an authorisation as the gateway reports it.
type CardAuthorization struct {
	ID            string `json:"id"` // the gateway's id (cauth_...)
	Object        string `json:"object"`
	Reference     string `json:"reference"`
	Status        string `json:"status"`
	AmountMinor   int64  `json:"amount_minor"`
	CapturedMinor int64  `json:"captured_minor"`
	Currency      string `json:"currency"`
	// AuthCode is the issuer's approval code (authorized and captured).
	AuthCode string `json:"auth_code,omitempty"`
	// Failure is set when declined: code card_declined and a decline_code.
	Failure *Failure `json:"failure"`
	// Card is the card's brand and last four digits (type card).
	Card      *MethodDetails `json:"card"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// CardCaptureRequest captures an authorised amount, all or part:
// POST {base_url}/v1/card_authorizations/{id}/capture. The rest is released.
type CardCaptureRequest struct {
	AmountMinor int64 `json:"amount_minor"`
}

// CardVoidRequest releases an authorisation without capturing it:
// POST {base_url}/v1/card_authorizations/{id}/void, body {}.
type CardVoidRequest struct{}

// CardRefundRequest gives back all or part of a captured authorisation:
// POST {base_url}/v1/card_authorizations/{id}/refunds. The answer is a
// Refund whose PaymentReference is the authorisation's reference; its status
// is asked like any refund's (GET /v1/refunds?reference=).
type CardRefundRequest struct {
	// Reference is payd's id of the refund (re_...), unique per account.
	Reference   string `json:"reference"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	CallbackURL string `json:"callback_url"`
}
