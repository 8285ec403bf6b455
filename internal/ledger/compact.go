package ledger

import (
	"context"
	"sort"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// CompactTestMode folds every test-mode ledger transaction older than before
// into one carry-forward transaction per run: each account gets one entry
// with the sum of its purged entries, then the old entries are deleted.
// Balances do not change and the book still sums to zero, because every
// purged transaction was balanced on its own. It returns how many
// transactions were folded.
func CompactTestMode(ctx context.Context, tx *store.Tx, before time.Time) (int, error) {
	cut := store.Micros(before)
	var n int
	if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM ledger_transactions WHERE livemode = ? AND created_at < ?", false, cut).Scan(&n); err != nil || n == 0 {
		return 0, err
	}
	rows, err := tx.Query(ctx, `SELECT e.account_id, e.currency, SUM(e.amount) FROM ledger_entries e
		JOIN ledger_transactions t ON t.id = e.transaction_id
		WHERE t.livemode = ? AND t.created_at < ? GROUP BY e.account_id, e.currency`, false, cut)
	if err != nil {
		return 0, err
	}
	type sum struct {
		account, currency string
		amount            int64
	}
	var sums []sum
	var folded []string
	for rows.Next() {
		var s sum
		if err := rows.Scan(&s.account, &s.currency, &s.amount); err != nil {
			rows.Close()
			return 0, err
		}
		folded = append(folded, s.account)
		if s.amount != 0 {
			sums = append(sums, s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if err := dropCheckpoints(ctx, tx, folded); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM ledger_entries WHERE transaction_id IN
		(SELECT id FROM ledger_transactions WHERE livemode = ? AND created_at < ?)`, false, cut); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, "DELETE FROM ledger_transactions WHERE livemode = ? AND created_at < ?", false, cut); err != nil {
		return 0, err
	}
	if len(sums) == 0 {
		return n, nil
	}
	id := ids.New("ltx_")
	if _, err := tx.Exec(ctx, `INSERT INTO ledger_transactions (id, merchant_id, livemode, kind, reference, created_at) VALUES (?, 'system', ?, 'sandbox_carry_forward', '', ?)`,
		id, false, store.Micros(tx.Now())); err != nil {
		return 0, err
	}
	for _, s := range sums {
		if _, err := tx.Exec(ctx, "INSERT INTO ledger_entries (transaction_id, account_id, currency, amount) VALUES (?, ?, ?, ?)",
			id, s.account, s.currency, s.amount); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// dropCheckpoints deletes the checkpoints of accounts whose old entries are
// being folded: the running sums they hold no longer describe the entries
// left. The accounts' rows are locked first (in id order, as the checkpoint
// job locks them), so a chain being extended meanwhile is either committed
// before and deleted here, or built afterwards on the folded entries.
func dropCheckpoints(ctx context.Context, tx *store.Tx, accounts []string) error {
	sort.Strings(accounts)
	for start := 0; start < len(accounts); start += 500 {
		part := accounts[start:min(start+500, len(accounts))]
		rows, err := tx.Query(ctx, "SELECT id FROM ledger_accounts WHERE id IN ("+store.Placeholders(len(part))+") ORDER BY id"+
			tx.Dialect().ForNoKeyUpdate(), store.Args(part)...)
		if err != nil {
			return err
		}
		for rows.Next() { // read every row: PostgreSQL locks them as it returns them
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM ledger_checkpoints WHERE account_id IN ("+store.Placeholders(len(part))+")", store.Args(part)...); err != nil {
			return err
		}
	}
	return nil
}
