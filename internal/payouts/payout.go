// Package payouts owns payouts: single payouts, bulk batches in both shapes
// (variant A "items", reserved at submission; variant
// B "rows", approved by a second principal), sanctions screening holds,
// four-eyes approval above the merchant's threshold, the dispatch of
// payouts to their rails and the float they reserve.
//
// Money: creating a payout (or approving a variant B batch, or submitting a
// variant A batch) reserves its amount, available → reserved, in the same
// transaction. Each payout then ends with exactly one more posting: reserved
// → the provider's clearing account when it succeeds (the money left),
// reserved → available when it fails or is canceled. A retry reserves again.
//
// Dispatch: the payouts table is its own queue. A payout waiting for its
// rail has dispatch_at set; a dispatcher claims a chunk of them with a
// lease, calls the rail outside any transaction, and records every outcome
// with a compare-and-set, so a payout reaches a terminal state once however
// many processes race or crash (see dispatch.go).
package payouts

import (
	"encoding/json"
	"time"

	"github.com/payd/payd/internal/screening"
)

// Payout is the payout object.
type Payout struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"` // "payout"
	Status           Status            `json:"status"`
	Amount           int64             `json:"amount"`
	Currency         string            `json:"currency"`
	Provider         string            `json:"provider"`
	RecipientMSISDN  *string           `json:"recipient_msisdn"`
	RecipientAccount *string           `json:"recipient_account"`
	RecipientName    *string           `json:"recipient_name"`
	Description      *string           `json:"description"`
	Metadata         map[string]string `json:"metadata"`
	Reference        string            `json:"reference"`
	BatchID          *string           `json:"batch_id"`
	Screening        Screening         `json:"screening"`
	FailureCode      *string           `json:"failure_code"`
	FailureMessage   *string           `json:"failure_message"`
	ApprovedBy       *string           `json:"approved_by"`
	Livemode         bool              `json:"livemode"`
	CreatedAt        time.Time         `json:"created_at"`
	UpdatedAt        time.Time         `json:"updated_at"`
	SucceededAt      *time.Time        `json:"succeeded_at"`
	FailedAt         *time.Time        `json:"failed_at"`

	// Not part of the object.
	MerchantID        string    `json:"-"`
	CreatedBy         string    `json:"-"` // the principal that made it (or its batch)
	NeedsApproval     bool      `json:"-"` // over the approval threshold when made
	ComplianceCleared bool      `json:"-"` // released after the rail held it
	Scenario          string    `json:"-"` // sandbox scenario name
	BatchRow          int       `json:"-"`
	CanceledAt        time.Time `json:"-"`
	dispatchAttempts  int
}

// Screening is the sanctions screening of the recipient's name.
type Screening struct {
	Status  string            `json:"status"` // clear, hit or not_screened
	Matches []screening.Match `json:"matches"`
}

// screeningOf converts a screening result.
func screeningOf(r screening.Result) Screening {
	m := r.Matches
	if m == nil {
		m = []screening.Match{}
	}
	return Screening{Status: r.Status, Matches: m}
}

func (s Screening) json() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// MarshalJSON renders the payout object: its fields and amount_minor, the
// amount in minor units under payd's one name for it. amount, the same
// value, is kept for API version 2026-11-29 only and is deprecated
// (CHANGELOG.md): payd's other objects never return minor units as amount.
func (p Payout) MarshalJSON() ([]byte, error) {
	type fields Payout // no methods: no recursion
	return json.Marshal(struct {
		AmountMinor int64 `json:"amount_minor"`
		fields
	}{p.Amount, fields(p)})
}

// Terminal reports whether a payout has reached an end state.
func (p *Payout) Terminal() bool { return p.Status.Terminal() }

// idempotencyKey is the key the payout is sent under: its reference, which
// is unique among a merchant's single payouts, qualified by the batch for a
// batch row (references are unique only within a batch). A retry sends the
// same key.
func (p *Payout) idempotencyKey() string {
	if p.BatchID != nil {
		return *p.BatchID + ":" + p.Reference
	}
	return p.Reference
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
