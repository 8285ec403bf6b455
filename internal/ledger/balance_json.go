package ledger

import "encoding/json"

// MarshalJSON renders one currency of the balance object with its money under
// payd's one grammar: available_minor, reserved_minor and pending_minor.
// available, reserved and pending, the same values, are kept for API version
// 2026-11-29 only and are deprecated (CHANGELOG.md).
func (b Balance) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Currency       string `json:"currency"`
		AvailableMinor int64  `json:"available_minor"`
		ReservedMinor  int64  `json:"reserved_minor"`
		PendingMinor   int64  `json:"pending_minor"`
		Available      int64  `json:"available"`
		Reserved       int64  `json:"reserved"`
		Pending        int64  `json:"pending"`
	}{b.Currency, b.Available, b.Reserved, b.Pending, b.Available, b.Reserved, b.Pending})
}
