// Package payments owns payment intents: their types, the state machine, the
// service that creates and confirms them through provider adapters, and the
// SQL that stores them.
package payments

import (
	"encoding/json"
	"time"
)

// Status is a payment intent's state.
type Status string

// The states of a payment intent. Succeeded and canceled are terminal.
const (
	RequiresAction   Status = "requires_action"
	Processing       Status = "processing"
	Succeeded        Status = "succeeded"
	Canceled         Status = "canceled"
	ComplianceReview Status = "compliance_review"
	// RequiresCapture is a card payment authorised with capture_method
	// manual: nothing is credited until POST .../capture (or the
	// authorisation is released by a cancel or the capture window).
	RequiresCapture Status = "requires_capture"
)

// The capture methods of a payment intent.
const (
	// CaptureAutomatic captures the money when the payment is authorised.
	CaptureAutomatic = "automatic"
	// CaptureManual stops a card payment at requires_capture.
	CaptureManual = "manual"
)

// The cancellation reasons of a payment intent (cancellation_reason).
const (
	ReasonDuplicate           = "duplicate"
	ReasonFraudulent          = "fraudulent"
	ReasonRequestedByCustomer = "requested_by_customer"
	// ReasonAbandoned is also what the expiry job records.
	ReasonAbandoned = "abandoned"
)

// Intent is the PaymentIntent object as the API returns it.
type Intent struct {
	ID                  string `json:"id"`
	Object              string `json:"object"` // "payment_intent"
	Status              Status `json:"status"`
	AmountMinor         int64  `json:"amount_minor"`
	AmountCapturedMinor int64  `json:"amount_captured_minor"`
	// AmountCapturableMinor is what a requires_capture intent may still
	// capture; 0 in every other state.
	AmountCapturableMinor int64             `json:"amount_capturable_minor"`
	CaptureMethod         string            `json:"capture_method"`
	AmountRefundedMinor   int64             `json:"amount_refunded_minor"` // succeeded refunds
	Refunded              bool              `json:"refunded"`              // fully refunded
	Disputed              bool              `json:"disputed"`              // a dispute exists (internal/disputes)
	Currency              string            `json:"currency"`
	Provider              string            `json:"provider"`
	CustomerMSISDN        *string           `json:"customer_msisdn"`
	Description           *string           `json:"description"`
	Metadata              map[string]string `json:"metadata"`
	ReturnURL             *string           `json:"return_url"`
	NextAction            *NextAction       `json:"next_action"`
	LastError             *LastError        `json:"last_error"`
	PaymentMethodDetails  *json.RawMessage  `json:"payment_method_details"`
	Livemode              bool              `json:"livemode"`
	CreatedAt             time.Time         `json:"created_at"`
	SucceededAt           *time.Time        `json:"succeeded_at"`
	CanceledAt            *time.Time        `json:"canceled_at"`
	// CancellationReason is set by a cancel (the merchant's, or the
	// expiry job's "abandoned"); provider refusals leave it null.
	CancellationReason *string `json:"cancellation_reason"`
	MerchantID         string  `json:"-"`
	// InvoiceID is the invoice billing created the intent for (never
	// set through the API; metadata["invoice"] is only the merchant's
	// note): the one invoice the intent's outcome may pay.
	InvoiceID string `json:"-"`
}

// NextAction tells the client what to do next.
type NextAction struct {
	Type        string `json:"type"` // collect_otp, redirect, push_approval; redirect_to_url for 3-D Secure
	OTPLength   int    `json:"otp_length,omitempty"`
	RedirectURL string `json:"redirect_url,omitempty"`
}

// LastError is the provider's refusal as the intent carries it.
type LastError struct {
	Code        string `json:"code"`
	Message     string `json:"message"`
	Provider    string `json:"provider"`
	DeclineCode string `json:"decline_code,omitempty"`
}

// CardPresent is a card-present authorisation outcome from a terminal, to be
// recorded as a payment intent by Service.RecordCardPresent. It carries no
// PAN, track data or cryptogram: only what may be stored.
type CardPresent struct {
	AmountMinor int64
	Currency    string
	TerminalID  string // term_...
	OutletID    string
	Brand       string // visa, mastercard, ...
	Last4       string
	EntryMode   string // chip, contactless, swipe
	Approved    bool
	AuthCode    string // on approval, for the receipt
	DeclineCode string // on decline, e.g. generic_decline
	// IdempotencyKey is the terminal payment request's key, so a retried
	// terminal request records one intent.
	IdempotencyKey string
	// CaptureMethod is automatic ("" too) or manual: an approval then
	// stops at requires_capture.
	CaptureMethod string
}
