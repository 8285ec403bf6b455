// Package retention purges what payd does not keep: test-mode data older
// than 30 days (Purger), and the operational records that only grow —
// events, webhook deliveries, request logs and spent idempotency keys — past
// the horizons of the operator's Policy (Horizons). A merchant's money and
// objects (ledger entries, payment intents, payouts, refunds, transfers,
// invoices) in live mode are never purged.
package retention

import (
	"context"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

// SandboxRetention is how long test-mode data is kept.
const SandboxRetention = 30 * 24 * time.Hour

// Table is a table with test-mode rows to purge: it must have livemode and
// created_at columns. Child tables are listed before their parents.
type Table struct {
	Name string
	// ByMerchant purges the table merchant by merchant, through an index
	// that begins (merchant_id, livemode, created_at) which the table keeps
	// for its own reads, instead of an index on (livemode, created_at) that
	// every insert would pay for to serve this hourly job alone. The table
	// needs a merchant_id column whose values are rows of merchants (which
	// are never deleted).
	ByMerchant bool
}

// Purger deletes old test-mode rows.
type Purger struct {
	DB     *store.DB
	Tables []Table
}

// Result counts what one run removed.
type Result struct {
	Rows               map[string]int64
	LedgerTransactions int
}

// Run purges test-mode rows created before now - SandboxRetention and folds
// old test-mode ledger transactions into a carry-forward entry. Each table is purged in its own transaction so a large
// purge does not hold the write lock for long.
func (p *Purger) Run(ctx context.Context) (Result, error) {
	res := Result{Rows: map[string]int64{}}
	cutoff := p.DB.Now().Add(-SandboxRetention)
	for _, t := range p.Tables {
		if t.ByMerchant {
			n, err := p.purgeByMerchant(ctx, t.Name, cutoff)
			res.Rows[t.Name] = n
			if err != nil {
				return res, err
			}
			continue
		}
		err := p.DB.InTx(ctx, func(tx *store.Tx) error {
			r, err := tx.Exec(ctx, "DELETE FROM "+t.Name+" WHERE livemode = ? AND created_at < ?", false, store.Micros(cutoff))
			if err != nil {
				return err
			}
			res.Rows[t.Name], _ = r.RowsAffected()
			return nil
		})
		if err != nil {
			return res, err
		}
	}
	err := p.DB.InTx(ctx, func(tx *store.Tx) error {
		n, err := ledger.CompactTestMode(ctx, tx, cutoff)
		res.LedgerTransactions = n
		return err
	})
	return res, err
}

// purgeByMerchant deletes table's test-mode rows created before cutoff, one
// merchant at a time, each in its own transaction (so a large purge holds
// SQLite's writer for one merchant's rows at a time).
func (p *Purger) purgeByMerchant(ctx context.Context, table string, cutoff time.Time) (int64, error) {
	merchants, err := store.Strings(ctx, p.DB, "SELECT id FROM merchants ORDER BY id")
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range merchants {
		r, err := p.DB.Exec(ctx, "DELETE FROM "+table+" WHERE merchant_id = ? AND livemode = ? AND created_at < ?",
			m, false, store.Micros(cutoff))
		if err != nil {
			return total, err
		}
		n, _ := r.RowsAffected()
		total += n
	}
	return total, nil
}
