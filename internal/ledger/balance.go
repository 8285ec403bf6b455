package ledger

import (
	"context"
	"fmt"
	"sort"

	"github.com/payd/payd/internal/store"
)

// Balance is a merchant's position in one currency.
type Balance struct {
	Currency  string `json:"currency"`
	Available int64  `json:"available"`
	Reserved  int64  `json:"reserved"`
	Pending   int64  `json:"pending"`
}

// Balances returns the merchant's merchant-facing balances per currency for
// one mode, sorted by currency.
func Balances(ctx context.Context, q store.Querier, merchantID string, livemode bool) ([]Balance, error) {
	rows, err := q.Query(ctx, `SELECT currency, kind, balance FROM ledger_accounts
		WHERE merchant_id = ? AND livemode = ? AND kind IN ('available','reserved','pending')`, merchantID, livemode)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	by := map[string]*Balance{}
	for rows.Next() {
		var cur, kind string
		var bal int64
		if err := rows.Scan(&cur, &kind, &bal); err != nil {
			return nil, err
		}
		b := by[cur]
		if b == nil {
			b = &Balance{Currency: cur}
			by[cur] = b
		}
		switch AccountKind(kind) {
		case Available:
			b.Available = bal
		case Reserved:
			b.Reserved = bal
		case Pending:
			b.Pending = bal
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Balance, 0, len(by))
	for _, b := range by {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Currency < out[j].Currency })
	return out, nil
}

// AccountBalance returns one account's balance (0 when it does not exist yet).
func AccountBalance(ctx context.Context, q store.Querier, a AccountRef) (int64, error) {
	var bal int64
	err := q.QueryRow(ctx, `SELECT balance FROM ledger_accounts WHERE merchant_id = ? AND livemode = ? AND currency = ? AND kind = ? AND provider = ?`,
		a.MerchantID, a.Livemode, a.Currency, string(a.Kind), a.Provider).Scan(&bal)
	if store.IsNotFound(err) {
		return 0, nil
	}
	return bal, err
}

// Verify checks the book's invariants over the whole database: every
// transaction sums to zero per currency, every currency sums to zero, and
// every account's balance equals the sum of its entries. Tests call it after
// every scenario.
func Verify(ctx context.Context, q store.Querier) error {
	rows, err := q.Query(ctx, `SELECT transaction_id, currency, SUM(amount) FROM ledger_entries
		GROUP BY transaction_id, currency HAVING SUM(amount) <> 0`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, cur string
		var s int64
		rows.Scan(&id, &cur, &s)
		rows.Close()
		return fmt.Errorf("ledger transaction %s is unbalanced in %s by %d", id, cur, s)
	}
	rows.Close()
	rows, err = q.Query(ctx, `SELECT currency, SUM(balance) FROM ledger_accounts GROUP BY currency HAVING SUM(balance) <> 0`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var cur string
		var s int64
		rows.Scan(&cur, &s)
		rows.Close()
		return fmt.Errorf("ledger balances in %s sum to %d", cur, s)
	}
	rows.Close()
	rows, err = q.Query(ctx, `SELECT a.id, a.balance, COALESCE(SUM(e.amount), 0) FROM ledger_accounts a
		LEFT JOIN ledger_entries e ON e.account_id = a.id GROUP BY a.id, a.balance HAVING a.balance <> COALESCE(SUM(e.amount), 0)`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var bal, sum int64
		rows.Scan(&id, &bal, &sum)
		return fmt.Errorf("account %s has balance %d but its entries sum to %d", id, bal, sum)
	}
	rows, err = q.Query(ctx, `SELECT id FROM ledger_accounts WHERE kind IN ('available','reserved','pending') AND balance < 0`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		rows.Scan(&id)
		return fmt.Errorf("merchant-facing account %s is negative", id)
	}
	return rows.Err()
}
