package app

import (
	"context"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/reports"
)

// Balance transactions and settlement reports: read models over the ledger,
// with payments (and refunds) telling where each payment was taken.
func init() {
	wirers = append(wirers, func(ctx context.Context, m *Main) error {
		svc := reports.NewService(reports.Config{DB: m.DB, Payments: m.PaymentIntents()})
		api.RegisterBalanceTransactions(m.API, svc)
		api.RegisterReports(m.API, svc)
		m.reportsSvc = svc
		return nil
	})
}

// Reports returns the balance transaction and settlement report service,
// for the portal; nil before Open.
func (m *Main) Reports() *reports.Service { return m.reportsSvc }
