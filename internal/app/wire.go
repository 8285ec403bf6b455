package app

import (
	"context"
	"time"

	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/retention"
)

// purgeTables are the tables holding test-mode rows older than 30 days to
// delete, children before parents. Each capability adds its own.
var purgeTables = []retention.Table{
	{Name: "events"},
}

// wire builds each capability's service and registers its routes and jobs.
// Capabilities are added here, one block each.
func (m *Main) wire(ctx context.Context) error {
	purger := &retention.Purger{DB: m.DB, Tables: purgeTables}
	m.Jobs.Every("sandbox_purge", time.Hour, func(ctx context.Context, _ jobs.Job) error {
		res, err := purger.Run(ctx)
		if err == nil {
			m.Logger.Info("sandbox purge", "rows", res.Rows, "ledger_transactions", res.LedgerTransactions, "idempotency_keys", res.IdempotencyKeys)
		}
		return err
	})

	// --- capabilities: payments ---
	// --- capabilities: webhooks ---
	// --- capabilities: payouts ---
	// --- capabilities: banking ---
	// --- capabilities: terminals ---
	return nil
}

// startWorkers starts the capabilities' long-running workers (beyond the job
// runner) on ctx, tracked by m.wg.
func (m *Main) startWorkers(ctx context.Context) {
	// --- workers: webhooks ---
}

// publicURLChanged lets capabilities that build URLs learn the real address
// when the server listens on port 0.
func (m *Main) publicURLChanged() {
	// --- public url: payments ---
}
