package billing

import "encoding/json"

// MarshalJSON renders the invoice object with its money under payd's one
// grammar: amount_due_minor, amount_paid_minor and amount_remaining_minor.
// amount_due, amount_paid and amount_remaining, the same values, are kept for
// API version 2026-11-29 only and are deprecated (CHANGELOG.md).
func (v Invoice) MarshalJSON() ([]byte, error) {
	type fields Invoice // no methods: no recursion
	return json.Marshal(struct {
		fields
		AmountDueMinor       int64 `json:"amount_due_minor"`
		AmountPaidMinor      int64 `json:"amount_paid_minor"`
		AmountRemainingMinor int64 `json:"amount_remaining_minor"`
	}{fields(v), v.AmountDue, v.AmountPaid, v.AmountRemaining})
}
