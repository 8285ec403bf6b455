package ledger

import (
	"context"
	"fmt"
	"sort"
	"strings"

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
	rows, err := q.Query(ctx, `SELECT a.currency, a.kind, CAST(COALESCE(SUM(b.balance), 0) AS BIGINT)
		FROM ledger_accounts a LEFT JOIN ledger_balances b ON b.account_id = a.id
		WHERE a.merchant_id = ? AND a.livemode = ? AND a.kind IN ('available','reserved','pending')
		GROUP BY a.currency, a.kind`, merchantID, livemode)
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
	err := q.QueryRow(ctx, `SELECT CAST(COALESCE(SUM(b.balance), 0) AS BIGINT) FROM ledger_accounts a
		JOIN ledger_balances b ON b.account_id = a.id
		WHERE a.merchant_id = ? AND a.livemode = ? AND a.currency = ? AND a.kind = ? AND a.provider = ?`,
		a.MerchantID, a.Livemode, a.Currency, string(a.Kind), a.Provider).Scan(&bal)
	return bal, err
}

// Verify checks the book's invariants over the whole database: every
// transaction sums to zero per currency, every currency sums to zero, and
// every entry's account exists in its currency, every account's balance
// equals the sum of its entries, and no merchant-facing
// balance (nor any of its slots) is negative, and no source (a payment
// intent, a payout, a refund, a transfer, a dispute) holds a movement more
// often than it may (sources.go): a double effect copied in balance passes
// every sum but not that. Tests call it after every scenario.
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
	// Every entry names an account that exists, in the entry's currency (on
	// PostgreSQL no foreign key holds this: its check locked the account's
	// row for every posting).
	var orphan, orphanTx string
	err = q.QueryRow(ctx, `SELECT e.account_id, e.transaction_id FROM ledger_entries e
		LEFT JOIN ledger_accounts a ON a.id = e.account_id WHERE a.id IS NULL OR a.currency <> e.currency LIMIT 1`).Scan(&orphan, &orphanTx)
	if err == nil {
		return fmt.Errorf("ledger transaction %s has an entry on account %s, which does not exist in its currency", orphanTx, orphan)
	} else if !store.IsNotFound(err) {
		return err
	}
	rows, err = q.Query(ctx, `SELECT a.currency, CAST(SUM(b.balance) AS BIGINT) FROM ledger_balances b
		JOIN ledger_accounts a ON a.id = b.account_id GROUP BY a.currency HAVING SUM(b.balance) <> 0`)
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
	rows, err = q.Query(ctx, `SELECT a.id, COALESCE(b.total, 0), COALESCE(e.total, 0) FROM ledger_accounts a
		LEFT JOIN (SELECT account_id, CAST(SUM(balance) AS BIGINT) AS total FROM ledger_balances GROUP BY account_id) b ON b.account_id = a.id
		LEFT JOIN (SELECT account_id, CAST(SUM(amount) AS BIGINT) AS total FROM ledger_entries GROUP BY account_id) e ON e.account_id = a.id
		WHERE COALESCE(b.total, 0) <> COALESCE(e.total, 0)`)
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
	// Every slot of a merchant-facing account stays at or above zero (a
	// stronger rule than the account's sum doing so).
	// The one exception: an available account a dispute overdrew (OverdrawKinds)
	// may be below zero.
	over := make([]string, len(OverdrawKinds))
	for i, k := range OverdrawKinds {
		over[i] = "'" + k + "'"
	}
	rows, err = q.Query(ctx, `SELECT a.id FROM ledger_balances b JOIN ledger_accounts a ON a.id = b.account_id
		WHERE a.kind IN ('available','reserved','pending') AND b.balance < 0
		AND NOT (a.kind = 'available' AND EXISTS (SELECT 1 FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
			WHERE e.account_id = a.id AND t.kind IN (`+strings.Join(over, ", ")+`)))`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		rows.Scan(&id)
		return fmt.Errorf("merchant-facing account %s is negative", id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	if err := verifyCheckpoints(ctx, q); err != nil {
		return err
	}
	return verifySources(ctx, q)
}
