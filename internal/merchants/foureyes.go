package merchants

import (
	"context"

	"github.com/payd/payd/internal/store"
)

// ApprovalThreshold returns the amount above which money leaving a merchant's
// balance in this mode (a payout, a refund) waits for a second principal; nil
// means no threshold. Every capability that applies four-eyes reads the
// threshold here, so the rule has one owner.
func ApprovalThreshold(ctx context.Context, q store.Querier, merchantID string, livemode bool) (*int64, error) {
	m, err := Get(ctx, q, merchantID)
	if err != nil {
		return nil, err
	}
	return m.ApprovalThresholdMinor, nil
}

// SamePerson reports whether two principals (key_... or usr_... ids) count as
// the same person for four-eyes: the approver of a money movement must not be
// its creator. Every capability that applies four-eyes asks here.
func SamePerson(ctx context.Context, q store.Querier, creator, approver string) (bool, error) {
	return creator == approver, nil
}
