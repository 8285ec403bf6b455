package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/payouts"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/sandbox"
	"github.com/payd/payd/internal/screening"
)

func init() { wirers = append(wirers, wirePayouts) }

// payoutsOf and screenersOf hold each Main's payout service and sanctions
// screener, for the capabilities (portal, banking) that need them.
var payoutsOf, screenersOf sync.Map // *Main → *payouts.Service, *screening.Screener

// Payouts returns the payout service (for the portal).
func (m *Main) Payouts() *payouts.Service {
	v, _ := payoutsOf.Load(m)
	s, _ := v.(*payouts.Service)
	return s
}

// Sanctions returns the sanctions screener loaded from PAYD_SANCTIONS_LIST
// (reloaded on SIGHUP); with no list configured it answers not_screened.
func (m *Main) Sanctions() *screening.Screener {
	v, _ := screenersOf.Load(m)
	s, _ := v.(*screening.Screener)
	return s
}

// wirePayouts loads the sanctions list, builds the payout service on the
// payout rails (the sandbox rail in test mode, the live adapters of
// wire_providers.go in live mode), mounts its routes and starts its dispatcher.
func wirePayouts(ctx context.Context, m *Main) error {
	scr := screening.NewScreener(m.Config.SanctionsList, screening.Options{})
	if m.Config.SanctionsList != "" {
		start := time.Now()
		if err := scr.Reload(ctx); err != nil {
			return fmt.Errorf("PAYD_SANCTIONS_LIST: %w", err)
		}
		m.Logger.Info("sanctions list loaded", "entries", scr.Size(), "took_ms", time.Since(start).Milliseconds())
	}
	rails := &providers.PayoutRails{Sandbox: sandbox.NewPayoutRail(m.Config.SandboxTimeoutDelay), Live: m.livePayoutRail}
	// A payout its rail did not answer is asked about again after the
	// sandbox timeout (tests set it to milliseconds), at most after the
	// reconciliation interval.
	reconcile := max(min(m.Config.ReconcileInterval, m.Config.SandboxTimeoutDelay), 10*time.Millisecond)
	svc := payouts.New(payouts.Config{DB: m.DB, Rails: rails, Screener: scr, Logger: m.Logger, Registry: m.Registry,
		ReconcileAfter: reconcile})
	api.RegisterPayouts(m.API, svc)
	payoutsOf.Store(m, svc)
	screenersOf.Store(m, scr)
	m.PurgeTestMode("payout_batch_rows", "payouts", "payout_batches")
	m.OnStart(svc.Run)
	m.OnReload(func(ctx context.Context) {
		if m.Config.SanctionsList == "" {
			return
		}
		if err := scr.Reload(ctx); err != nil {
			m.Logger.Error("sanctions list reload failed; the previous list stays in use", "err", err)
			return
		}
		m.Logger.Info("sanctions list reloaded", "entries", scr.Size())
	})
	m.OnClose(func() {
		payoutsOf.Delete(m)
		screenersOf.Delete(m)
	})
	return nil
}
