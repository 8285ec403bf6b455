// Package retention purges what payd does not keep: test-mode data older
// than 30 days and expired idempotency keys.
// Live data is never purged.
package retention

import (
	"context"
	"time"

	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

// SandboxRetention is how long test-mode data is kept.
const SandboxRetention = 30 * 24 * time.Hour

// Table is a table with test-mode rows to purge: it must have livemode and
// created_at columns. Child tables are listed before their parents.
type Table struct {
	Name string
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
	IdempotencyKeys    int64
}

// Run purges test-mode rows created before now - SandboxRetention, folds old
// test-mode ledger transactions into a carry-forward entry, and drops expired
// idempotency keys. Each table is purged in its own transaction so a large
// purge does not hold the write lock for long.
func (p *Purger) Run(ctx context.Context) (Result, error) {
	res := Result{Rows: map[string]int64{}}
	cutoff := p.DB.Now().Add(-SandboxRetention)
	for _, t := range p.Tables {
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
	if err != nil {
		return res, err
	}
	res.IdempotencyKeys, err = idempotency.Purge(ctx, p.DB)
	return res, err
}
