package app

import (
	"context"
	"fmt"
	"sync"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/banking"
	"github.com/payd/payd/internal/screening"
)

// bankingServices holds each Main's banking service (tests run several Mains
// in one process).
var bankingServices sync.Map // *Main → *banking.Service

// Banking returns the bank transfer service (for the portal's compliance
// queue and for tests).
func (m *Main) Banking() *banking.Service {
	s, _ := bankingServices.Load(m)
	svc, _ := s.(*banking.Service)
	return svc
}

func init() {
	wirers = append(wirers, func(ctx context.Context, m *Main) error {
		// Transfers are screened against the same list as payouts
		// (PAYD_SANCTIONS_LIST), reloaded on SIGHUP. No list: nothing is
		// screened. A list that is configured but cannot be loaded stops
		// the start rather than letting transfers through unscreened.
		var screener banking.NameScreener
		if m.Config.SanctionsList != "" {
			s, err := screening.OpenScreener(ctx, m.Config.SanctionsList, screening.Options{})
			if err != nil {
				return fmt.Errorf("banking: sanctions list: %w", err)
			}
			screener = s
			m.OnReload(func(ctx context.Context) {
				if err := s.Reload(ctx); err != nil {
					m.Logger.Error("banking: reload sanctions list; keeping the current one", "err", err)
					return
				}
				m.Logger.Info("banking: sanctions list reloaded", "entries", s.Size())
			})
		}
		svc := banking.NewService(banking.Config{DB: m.DB, Screener: screener, Logger: m.Logger, Notify: m.Jobs.Notify})
		bankingServices.Store(m, svc)
		m.OnClose(func() { bankingServices.Delete(m) })
		m.Jobs.Handle(banking.SettleJobKind, svc.HandleSettleJob)
		api.RegisterTransfers(m.API, svc)
		m.PurgeTestMode("transfer_returns", "transfers", "transfer_messages")
		return nil
	})
}
