package app

import (
	"context"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/live"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sandbox"
	"github.com/payd/payd/internal/refunds"
)

// Refunds returns the refund service (for the portal).
func (m *Main) Refunds() *refunds.Service { return m.refundSvc }

// wireRefunds builds the refund service on the refund rails (the sandbox in
// test mode, the live adapters of the merchant's connections in live mode),
// mounts its routes and registers its poll and reconciliation jobs.
func wireRefunds(ctx context.Context, m *Main) error {
	rails := &providers.RefundRails{
		Sandbox: sandbox.NewRefundRail(m.Config.SandboxPushDelay),
		Live:    m.LiveProviders().RefundAdapter,
	}
	svc := refunds.New(refunds.Config{DB: m.DB, Rails: rails, Logger: m.Logger, WakeJobs: m.Jobs.Notify})
	api.RegisterRefunds(m.API, svc)
	m.refundSvc = svc
	m.Jobs.Handle(refunds.PollJob, svc.RunPollJob)
	m.Jobs.Every(refunds.ReconcileJob, m.Config.ReconcileInterval, svc.Reconcile(m.Config.ReconcileInterval))
	m.PurgeTestMode("refunds")
	return nil
}

// refundSettler applies refund callbacks through the refund service.
type refundSettler struct{ m *Main }

func (s refundSettler) ApplyProviderRefund(ctx context.Context, merchantID, provider string, r protocol.Refund) error {
	return s.m.Refunds().ApplyProviderResult(ctx, merchantID, provider, r.Reference, r.AmountMinor, r.Currency, live.RefundResult(r))
}
