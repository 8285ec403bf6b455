package app

import (
	"context"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/sandbox"
	"github.com/payd/payd/internal/refunds"
)

func init() { wirers = append(wirers, wireRefunds) }

// Refunds returns the refund service (for the portal).
func (m *Main) Refunds() *refunds.Service { return m.refundSvc }

// wireRefunds builds the refund service on the refund rails (the sandbox in
// test mode), mounts its routes and registers its poll job.
func wireRefunds(ctx context.Context, m *Main) error {
	rails := &providers.RefundRails{Sandbox: sandbox.NewRefundRail(m.Config.SandboxPushDelay)}
	svc := refunds.New(refunds.Config{DB: m.DB, Rails: rails, Logger: m.Logger, WakeJobs: m.Jobs.Notify})
	api.RegisterRefunds(m.API, svc)
	m.refundSvc = svc
	m.Jobs.Handle(refunds.PollJob, svc.RunPollJob)
	m.PurgeTestMode("refunds")
	return nil
}
