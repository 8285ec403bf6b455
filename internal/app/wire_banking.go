package app

import (
	"context"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/banking"
)

// Banking returns the bank transfer service (for the portal's compliance
// queue and for tests).
func (m *Main) Banking() *banking.Service { return m.bankingSvc }

// wireBanking builds the bank transfer service, mounts its routes and
// registers its settlement job.
func wireBanking(ctx context.Context, m *Main) error {
	// Transfers are screened against the same list as payouts
	// (PAYD_SANCTIONS_LIST, loaded once, reloaded on SIGHUP). With no
	// list configured test mode is not screened and live mode refused.
	var screener banking.NameScreener
	if m.Config.SanctionsList != "" {
		screener = m.Sanctions()
	}
	svc := banking.NewService(banking.Config{DB: m.DB, Screener: screener, Logger: m.Logger, Notify: m.Jobs.Notify})
	m.bankingSvc = svc
	m.Jobs.Handle(banking.SettleJobKind, svc.HandleSettleJob)
	api.RegisterTransfers(m.API, svc)
	m.PurgeTestMode("transfer_returns", "transfers", "transfer_messages")
	return nil
}
