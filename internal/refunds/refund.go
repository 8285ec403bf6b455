// Package refunds owns refunds (re_...): money given back to the customer
// of a succeeded payment intent, in full or in part, several times, never
// more than was captured. It holds the refund's types, its state machine
// (states.go), the service and its SQL.
//
// Money (internal/ledger), each posting in the transaction of the change
// that causes it, with the refund's id as the ledger reference:
//
//	refund             at creation: available → reserved (402
//	                   insufficient_balance when available is short)
//	refund_settlement  on success: reserved → the provider's clearing
//	                   account (available is not touched)
//	refund_failure     on failure or cancel: reserved → available
//
// What is still refundable is kept on the payment intent and changed only
// through the exported functions of internal/payments, with a guard in the
// UPDATE, so racing refunds never refund more than was captured.
//
// The provider is reached only through providers.RefundAdapter, chosen by
// the key's mode (the sandbox in test mode).
package refunds

import (
	"time"
)

// Status is a refund's state.
type Status string

// The states of a refund. Succeeded, failed and canceled are terminal.
const (
	RequiresApproval Status = "requires_approval" // over the approval threshold; waits for a second principal
	Pending          Status = "pending"           // sent (or being sent); the provider's answer is not known yet
	Succeeded        Status = "succeeded"
	Failed           Status = "failed"
	Canceled         Status = "canceled"
)

// Statuses lists every refund state (for list filters).
var Statuses = []Status{RequiresApproval, Pending, Succeeded, Failed, Canceled}

// Reasons are the values reason may take.
var Reasons = []string{"requested_by_customer", "duplicate", "fraudulent"}

// Refund is the refund object of the API.
type Refund struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"` // "refund"
	PaymentIntent  string            `json:"payment_intent"`
	AmountMinor    int64             `json:"amount_minor"`
	Currency       string            `json:"currency"`
	Status         Status            `json:"status"`
	Reason         *string           `json:"reason"`
	FailureCode    *string           `json:"failure_code"`
	FailureMessage *string           `json:"failure_message"`
	Metadata       map[string]string `json:"metadata"`
	ApprovedBy     *string           `json:"approved_by"`
	Livemode       bool              `json:"livemode"`
	CreatedAt      time.Time         `json:"created_at"`
	SucceededAt    *time.Time        `json:"succeeded_at"`
	FailedAt       *time.Time        `json:"failed_at"`

	// Not part of the object.
	MerchantID  string     `json:"-"`
	Provider    string     `json:"-"` // the intent's provider: the rail the refund goes through
	CreatedBy   string     `json:"-"` // the principal that made it (four-eyes)
	Scenario    string     `json:"-"` // sandbox scenario
	ProviderRef string     `json:"-"`
	UpdatedAt   time.Time  `json:"-"`
	CanceledAt  *time.Time `json:"-"`
}

// view is the refund as the API shows it: times at second precision.
func (r *Refund) view() *Refund {
	v := *r
	v.Object = "refund"
	v.CreatedAt = v.CreatedAt.Truncate(time.Second)
	v.SucceededAt = truncated(v.SucceededAt)
	v.FailedAt = truncated(v.FailedAt)
	if v.Metadata == nil {
		v.Metadata = map[string]string{}
	}
	return &v
}

func truncated(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.Truncate(time.Second)
	return &v
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
