package ledger

import (
	"context"
	"sort"

	"github.com/payd/payd/internal/store"
)

// LockBalances returns the balances of accounts (0 for one that does not
// exist yet) and, on PostgreSQL, locks their rows until tx ends, in the same
// order Post takes them. A caller that decides several postings against
// these balances (a multi-transaction bank transfer message) can then rely
// on the figures, and two such callers touching the same accounts queue
// instead of deadlocking. SQLite's immediate transactions already exclude
// other writers.
func LockBalances(ctx context.Context, tx *store.Tx, accounts ...AccountRef) (map[AccountRef]int64, error) {
	refs := append([]AccountRef(nil), accounts...)
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].key() < refs[j].key() })
	out := make(map[AccountRef]int64, len(refs))
	for _, a := range refs {
		if _, done := out[a]; done {
			continue
		}
		var bal int64
		err := tx.QueryRow(ctx, `SELECT balance FROM ledger_accounts WHERE merchant_id = ? AND livemode = ? AND currency = ? AND kind = ? AND provider = ?`+
			tx.Dialect().ForUpdate(), a.MerchantID, a.Livemode, a.Currency, string(a.Kind), a.Provider).Scan(&bal)
		if err != nil && !store.IsNotFound(err) {
			return nil, err
		}
		out[a] = bal
	}
	return out, nil
}
