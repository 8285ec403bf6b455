package app

import (
	"context"
	"time"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/payouts"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/sandbox"
)

// Payouts returns the payout service (for the portal).
func (m *Main) Payouts() *payouts.Service { return m.payoutSvc }

// wirePayouts builds the payout service on the payout rails (the sandbox rail
// in test mode, the live connections of wireProviders in live mode), mounts
// its routes and starts its dispatcher.
func wirePayouts(ctx context.Context, m *Main) error {
	scr := m.Sanctions()
	rails := &providers.PayoutRails{Sandbox: sandbox.NewPayoutRail(m.Config.SandboxTimeoutDelay), Live: m.LiveProviders().PayoutAdapter}
	// A payout its rail did not answer is asked about again after the
	// sandbox timeout (tests set it to milliseconds), at most after the
	// reconciliation interval.
	reconcile := max(min(m.Config.ReconcileInterval, m.Config.SandboxTimeoutDelay), 10*time.Millisecond)
	svc := payouts.New(payouts.Config{DB: m.DB, Rails: rails, Screener: scr, Logger: m.Logger, Registry: m.Registry,
		ReconcileAfter: reconcile})
	api.RegisterPayouts(m.API, svc)
	m.payoutSvc = svc
	m.PurgeTestMode("payout_batch_rows", "payouts", "payout_batches")
	m.OnStart(svc.Run)
	return nil
}
