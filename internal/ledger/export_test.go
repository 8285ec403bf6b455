package ledger

import (
	"context"

	"github.com/payd/payd/internal/store"
)

// MovedTogether is how many entries the one-round-trip balance update has
// applied in this process.
func MovedTogether() int64 { return movedTogether.Load() }

// SlotsOf is how many balance rows hold the account's balance.
func SlotsOf(ctx context.Context, q store.Querier, a AccountRef) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM ledger_balances b JOIN ledger_accounts a ON a.id = b.account_id
		WHERE a.merchant_id = ? AND a.livemode = ? AND a.currency = ? AND a.kind = ? AND a.provider = ?`,
		a.MerchantID, a.Livemode, a.Currency, string(a.Kind), a.Provider).Scan(&n)
	return n, err
}
