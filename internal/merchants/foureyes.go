package merchants

import (
	"context"
	"database/sql"

	"github.com/payd/payd/internal/store"
)

// ApprovalThreshold returns the amount above which money leaving a merchant's
// balance in this mode (a payout, a batch, a refund) waits for a second
// person; nil means no threshold. The threshold is kept per mode, so a test
// key's settings never touch live money. Every capability that applies
// four-eyes reads the threshold here, so the rule has one owner.
func ApprovalThreshold(ctx context.Context, q store.Querier, merchantID string, livemode bool) (*int64, error) {
	var t sql.NullInt64
	err := q.QueryRow(ctx, "SELECT approval_threshold_minor FROM merchant_settings WHERE merchant_id = ? AND livemode = ?", merchantID, livemode).Scan(&t)
	if store.IsNotFound(err) || (err == nil && !t.Valid) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &t.Int64, nil
}

// SamePerson reports whether two principals (key_... or usr_... ids) count as
// the same person for four-eyes: the approver of a money movement must not be
// its creator. Every capability that applies four-eyes asks here.
func SamePerson(ctx context.Context, q store.Querier, creator, approver string) (bool, error) {
	return creator == approver, nil
}
