package app

import (
	"context"
	"time"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/reports"
)

// wireReports mounts balance transactions and settlement reports: read models over the ledger,
// with payments (and refunds) telling where each payment was taken.
func wireReports(ctx context.Context, m *Main) error {
	svc := reports.NewService(reports.Config{DB: m.DB, Payments: m.PaymentIntents(), Refunds: m.Refunds().IntentsOf})
	api.RegisterBalanceTransactions(m.API, svc)
	api.RegisterReports(m.API, svc)
	m.reportsSvc = svc
	m.Jobs.Every(checkpointJob, checkpointInterval, func(ctx context.Context, _ jobs.Job) error {
		_, err := ledger.WriteCheckpoints(ctx, m.DB, ledger.CheckpointEvery, ledger.CheckpointSettle)
		return err
	})
	return nil
}

// checkpointJob extends the available accounts' balance checkpoints, which
// keep a balance transaction's balance_after_minor as cheap a million entries
// back as on the first page.
const checkpointJob = "ledger_checkpoints"

// checkpointInterval is how often the checkpoint job runs; an account then
// lags at most this plus ledger.CheckpointSettle behind its newest posting,
// and pages in that stretch start from the balance now.
const checkpointInterval = time.Minute

// Reports returns the balance transaction and settlement report service,
// for the portal; nil before Open.
func (m *Main) Reports() *reports.Service { return m.reportsSvc }
