// Package protocol is payd's provider protocol (docs/providers.md): the JSON
// messages exchanged with a provider's API, the headers every call carries,
// and the signature of the callbacks a provider posts back. The live
// adapters (providers/live), the callback endpoint and the simulator
// (providers/sim) all speak it through these types, so they cannot drift
// apart. The package imports nothing of payd.
package protocol

import "time"

// Headers of the protocol.
const (
	// HeaderIdempotencyKey is sent on every call; a provider answers a
	// repeated key with the first answer and never acts twice.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderEventID, HeaderEventType and HeaderSignature are on every
	// callback (see Sign).
	HeaderEventID   = "Provider-Event-Id"
	HeaderEventType = "Provider-Event-Type"
	HeaderSignature = "Provider-Signature"
	// HeaderReplayed marks an answer replayed for a repeated idempotency key.
	HeaderReplayed = "Idempotent-Replayed"
)

// Payment statuses at a provider.
const (
	StatusPending   = "pending"   // waits for the customer (Action says how) or for the provider
	StatusSucceeded = "succeeded" // captured
	StatusFailed    = "failed"    // refused; Failure says why. Terminal.
	// StatusAuthorized: a card payment initiated with Capture false whose
	// card was approved: the amount is held, nothing captured, until
	// POST /v1/payments/{id}/capture (then succeeded) or /void (then
	// failed, code authorization_voided).
	StatusAuthorized = "authorized"
)

// FailureVoided is the failure code of a held authorisation released by a
// void.
const FailureVoided = "authorization_voided"

// PaymentCaptureRequest captures a held card payment, all or part:
// POST {base_url}/v1/payments/{id}/capture. The rest is released.
type PaymentCaptureRequest struct {
	AmountMinor int64 `json:"amount_minor"`
}

// PaymentVoidRequest releases a held card payment:
// POST {base_url}/v1/payments/{id}/void.
type PaymentVoidRequest struct{}

// Payout statuses at a provider.
const (
	PayoutProcessing = "processing" // accepted, not yet paid
	PayoutSucceeded  = "succeeded"  // paid
	PayoutFailed     = "failed"     // refused, nothing paid
	PayoutHeld       = "held"       // held by the provider's compliance
)

// Refund statuses at a provider.
const (
	RefundProcessing = "processing" // accepted, not yet paid back
	RefundSucceeded  = "succeeded"  // paid back to the customer
	RefundFailed     = "failed"     // refused, nothing paid back
)

// Payment modes a rail offers (PaymentRequest.Mode).
const (
	ModeOTP      = "otp"      // an SMS code the customer gives the merchant (bank_a, bank_b, wallet_c OTP)
	ModeHPP      = "hpp"      // wallet_a: phone and PIN on the provider's page
	ModeCard     = "card"     // wallet_a: a card on the provider's page, 3-D Secure there
	ModePush     = "push"     // approve in the wallet app (wallet_a default, wallet_c APP)
	ModeRedirect = "redirect" // wallet_d: the customer picks the method on the provider's page
	ModeDirect   = "direct"   // wallet_d: charge Method directly (push or OTP by method)
)

// Action types (Payment.Action.Type).
const (
	ActionOTP      = "otp"
	ActionRedirect = "redirect"
	ActionPush     = "push"
)

// PaymentRequest starts a payment: POST {base_url}/v1/payments.
type PaymentRequest struct {
	// Reference is payd's id of the payment (pi_...): unique per account;
	// the provider echoes it on the payment, in callbacks and in reports.
	Reference   string `json:"reference"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	Mode        string `json:"mode"`
	// MSISDN is the customer's number in the rail's own form: bank_a the
	// bare local number ("77123456"), the others E.164 ("+25377123456").
	MSISDN string `json:"msisdn,omitempty"`
	// Account is bank_b's wallet/account identifier.
	Account string `json:"account,omitempty"`
	// Method is wallet_d's direct payment method (telebirr, amole, ...).
	Method      string `json:"method,omitempty"`
	Description string `json:"description,omitempty"`
	// ReturnURL is where the provider's page sends the customer back.
	ReturnURL string `json:"return_url,omitempty"`
	// CallbackURL is where the provider posts this payment's callbacks.
	CallbackURL string `json:"callback_url"`
	// Capture, in mode card only, false: hold the approved amount
	// (status authorized) until a capture or a void. Absent or true:
	// capture at once.
	Capture *bool `json:"capture,omitempty"`
}

// OTPRequest passes the customer's code: POST {base_url}/v1/payments/{id}/otp.
type OTPRequest struct {
	OTP string `json:"otp"`
}

// Action is what a pending payment waits for.
type Action struct {
	Type      string `json:"type"`                 // otp, redirect, push
	OTPLength int    `json:"otp_length,omitempty"` // otp
	URL       string `json:"url,omitempty"`        // redirect: the provider's own page
}

// Failure is a provider's refusal.
type Failure struct {
	Code        string `json:"code"`
	Message     string `json:"message"`
	DeclineCode string `json:"decline_code,omitempty"`
}

// Payment is a payment as the provider reports it.
type Payment struct {
	ID            string         `json:"id"` // the provider's id (pay_...)
	Object        string         `json:"object"`
	Reference     string         `json:"reference"`
	Status        string         `json:"status"`
	AmountMinor   int64          `json:"amount_minor"`
	CapturedMinor int64          `json:"captured_minor"`
	Currency      string         `json:"currency"`
	Mode          string         `json:"mode"`
	Action        *Action        `json:"action"`
	Failure       *Failure       `json:"failure"`
	MethodDetails *MethodDetails `json:"method_details"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
	SettledAt     *time.Time     `json:"settled_at"`
}

// MethodDetails says how a payment was paid: a card's brand and last four
// digits (never the number), or a wallet_d method.
type MethodDetails struct {
	Type   string `json:"type"` // card, wallet
	Brand  string `json:"brand,omitempty"`
	Last4  string `json:"last4,omitempty"`
	Method string `json:"method,omitempty"`
}

// PayoutRequest sends money to a recipient: POST {base_url}/v1/payouts.
type PayoutRequest struct {
	// Reference is payd's id of the payout (po_...), unique per account.
	Reference   string `json:"reference"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	MSISDN      string `json:"msisdn,omitempty"`  // mobile-money rails, E.164
	Account     string `json:"account,omitempty"` // bank rails
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// ComplianceCleared tells the provider the merchant has reviewed a
	// payout the provider held (status held) and wants it paid.
	ComplianceCleared bool   `json:"compliance_cleared,omitempty"`
	CallbackURL       string `json:"callback_url"`
}

// Payout is a payout as the provider reports it.
type Payout struct {
	ID          string     `json:"id"` // the provider's id (pout_...)
	Object      string     `json:"object"`
	Reference   string     `json:"reference"`
	Status      string     `json:"status"`
	AmountMinor int64      `json:"amount_minor"`
	Currency    string     `json:"currency"`
	Failure     *Failure   `json:"failure"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	SettledAt   *time.Time `json:"settled_at"`
}

// RefundRequest gives back all or part of a captured payment:
// POST {base_url}/v1/refunds.
type RefundRequest struct {
	// Reference is payd's id of the refund (re_...), unique per account.
	Reference string `json:"reference"`
	// PaymentReference is payd's id of the refunded payment (pi_...), the
	// reference it was initiated under.
	PaymentReference string `json:"payment_reference"`
	AmountMinor      int64  `json:"amount_minor"`
	Currency         string `json:"currency"`
	CallbackURL      string `json:"callback_url"`
}

// Refund is a refund as the provider reports it.
type Refund struct {
	ID               string     `json:"id"` // the provider's id (rfd_...)
	Object           string     `json:"object"`
	Reference        string     `json:"reference"`
	PaymentReference string     `json:"payment_reference"`
	Status           string     `json:"status"`
	AmountMinor      int64      `json:"amount_minor"`
	Currency         string     `json:"currency"`
	Failure          *Failure   `json:"failure"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`
	SettledAt        *time.Time `json:"settled_at"`
}

// CallbackSecretRequest registers the secret the provider signs callbacks
// with: PUT {base_url}/v1/callback_secret.
type CallbackSecretRequest struct {
	Secret string `json:"secret"`
}

// Event is a callback's body. Data holds the payment or the payout as the
// provider reports it at the time of the event.
type Event struct {
	ID        string    `json:"id"` // pevt_..., the de-duplication key
	Object    string    `json:"object"`
	Type      string    `json:"type"` // see the Event* constants
	CreatedAt time.Time `json:"created_at"`
	Data      EventData `json:"data"`
}

// EventData carries exactly one of Payment, Payout, Refund and Dispute.
type EventData struct {
	Payment *Payment `json:"payment,omitempty"`
	Payout  *Payout  `json:"payout,omitempty"`
	Refund  *Refund  `json:"refund,omitempty"`
	Dispute *Dispute `json:"dispute,omitempty"`
}

// Dispute is a cardholder's bank contesting a card payment, as the provider
// reports it in dispute.created and dispute.closed callbacks.
type Dispute struct {
	ID               string    `json:"id"` // the provider's id (dsp_...)
	Object           string    `json:"object"`
	PaymentReference string    `json:"payment_reference"` // the payment's reference (payd's pi_...)
	Status           string    `json:"status"`            // DisputeOpen, DisputeWon, DisputeLost
	Reason           string    `json:"reason"`
	AmountMinor      int64     `json:"amount_minor"`
	Currency         string    `json:"currency"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// Dispute statuses.
const (
	DisputeOpen = "open"
	DisputeWon  = "won"
	DisputeLost = "lost"
)

// Event types.
const (
	EventPaymentSucceeded = "payment.succeeded"
	EventPaymentFailed    = "payment.failed"
	EventPaymentPending   = "payment.pending"
	// EventPaymentAuthorized: a card payment initiated with capture false
	// was approved and is held (status authorized).
	EventPaymentAuthorized = "payment.authorized"
	EventPayoutSucceeded   = "payout.succeeded"
	EventPayoutFailed      = "payout.failed"
	EventPayoutHeld        = "payout.held"
	EventDisputeCreated    = "dispute.created"
	EventDisputeClosed     = "dispute.closed"
	EventRefundSucceeded   = "refund.succeeded"
	EventRefundFailed      = "refund.failed"
)

// SettlementReport is a provider's daily report:
// GET {base_url}/v1/reports/settlement?date=YYYY-MM-DD.
type SettlementReport struct {
	Object  string            `json:"object"` // settlement_report
	Date    string            `json:"date"`   // the UTC day it covers
	Entries []SettlementEntry `json:"entries"`
	Totals  []SettlementTotal `json:"totals"`
}

// SettlementEntry is one settled movement of the day.
type SettlementEntry struct {
	Type        string    `json:"type"` // payment (the provider owes the merchant) or payout (the merchant owes the provider)
	ID          string    `json:"id"`   // the provider's id
	Reference   string    `json:"reference"`
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
	SettledAt   time.Time `json:"settled_at"`
}

// SettlementTotal sums a day's entries per currency.
type SettlementTotal struct {
	Currency      string `json:"currency"`
	PaymentsMinor int64  `json:"payments_minor"`
	PayoutsMinor  int64  `json:"payouts_minor"`
	Count         int    `json:"count"`
}

// ErrorBody is every error answer: {"error":{"code","message","field"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the error object.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}
