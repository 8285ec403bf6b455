package ledger

import (
	"context"
	"sort"

	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/store"
)

// LockBalances returns the balances of accounts (0 for one that does not
// exist yet) and, on PostgreSQL, locks all their balance rows (slots) until
// tx ends, in the same order Post takes them, so concurrent postings to them
// wait. A caller that decides several postings against
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
		var acct string
		err := tx.QueryRow(ctx, `SELECT id FROM ledger_accounts WHERE merchant_id = ? AND livemode = ? AND currency = ? AND kind = ? AND provider = ?`,
			a.MerchantID, a.Livemode, a.Currency, string(a.Kind), a.Provider).Scan(&acct)
		if store.IsNotFound(err) {
			out[a] = 0
			continue
		}
		if err != nil {
			return nil, err
		}
		slots, err := lockSlots(ctx, tx, acct)
		if err != nil {
			return nil, err
		}
		var bal int64
		for _, s := range slots {
			if bal, err = money.Add(bal, s.balance); err != nil {
				return nil, err
			}
		}
		out[a] = bal
	}
	return out, nil
}
