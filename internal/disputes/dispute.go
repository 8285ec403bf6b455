// Package disputes owns disputes (dp_...): a cardholder's bank contesting a
// card payment. It holds the dispute's types, its state machine (states.go),
// the evidence rules (evidence.go), the service and its SQL.
//
// Money (internal/ledger), each posting in the transaction of the change
// that causes it, with the dispute's id as the ledger reference:
//
//	dispute           at creation: available → the provider's clearing
//	                  account (available may go below zero: Overdraw)
//	dispute_reversal  when won: the provider's clearing account → available
//
// A lost dispute moves nothing more: the money stays withdrawn.
//
// A dispute comes from the sandbox (POST /v1/sandbox/disputes, the disputed
// test card) in test mode, and from a live provider's signed callback of
// kind dispute in live mode. The intent's disputed flag is set in the
// dispute's transaction (payments.MarkDisputed) and checked by a refund's
// reserve under the same row, so the two never both pass.
package disputes

import (
	"time"
)

// Status is a dispute's state.
type Status string

// The states of a dispute. Won and lost are terminal.
const (
	NeedsResponse Status = "needs_response" // the merchant may save and submit evidence until evidence_due_by
	UnderReview   Status = "under_review"   // evidence submitted; the bank decides
	Won           Status = "won"
	Lost          Status = "lost"
)

// Statuses lists every dispute state (for list filters).
var Statuses = []Status{NeedsResponse, UnderReview, Won, Lost}

// Reasons are the values reason may take.
var Reasons = []string{"fraudulent", "product_not_received", "duplicate", "credit_not_processed", "general"}

// ResponseWindow is how long after its creation a dispute's evidence may be
// saved and submitted (evidence_due_by).
const ResponseWindow = 7 * 24 * time.Hour

// Dispute is the dispute object of the API.
type Dispute struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"` // "dispute"
	PaymentIntent string            `json:"payment_intent"`
	AmountMinor   int64             `json:"amount_minor"`
	Currency      string            `json:"currency"`
	Reason        string            `json:"reason"`
	Status        Status            `json:"status"`
	Evidence      Evidence          `json:"evidence"`
	EvidenceDueBy time.Time         `json:"evidence_due_by"`
	Metadata      map[string]string `json:"metadata"`
	Livemode      bool              `json:"livemode"`
	CreatedAt     time.Time         `json:"created_at"`
	ClosedAt      *time.Time        `json:"closed_at"`

	// Not part of the object.
	MerchantID  string     `json:"-"`
	Provider    string     `json:"-"`
	ProviderRef string     `json:"-"` // the provider's dispute reference (live)
	SubmittedAt *time.Time `json:"-"`
	UpdatedAt   time.Time  `json:"-"`
}

// view is the dispute as the API shows it: times at second precision.
func (d *Dispute) view() *Dispute {
	v := *d
	v.Object = "dispute"
	v.CreatedAt = v.CreatedAt.Truncate(time.Second)
	v.EvidenceDueBy = v.EvidenceDueBy.Truncate(time.Second)
	if v.ClosedAt != nil {
		t := v.ClosedAt.Truncate(time.Second)
		v.ClosedAt = &t
	}
	if v.Metadata == nil {
		v.Metadata = map[string]string{}
	}
	return &v
}

// Owner is the merchant and mode the dispute belongs to (store.Owned).
func (d *Dispute) Owner() (string, bool) { return d.MerchantID, d.Livemode }

// Submitted reports whether the dispute's evidence was submitted.
func (d *Dispute) Submitted() bool { return d.SubmittedAt != nil }
