package app

import (
	"context"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/disputes"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers/protocol"
)

// Disputes returns the dispute service (for the portal).
func (m *Main) Disputes() *disputes.Service { return m.disputeSvc }

// wireDisputes builds the dispute service, mounts its routes (the sandbox
// trigger among them) and registers its sandbox jobs: the disputed test
// card's dispute and the magic evidence's decision.
func wireDisputes(ctx context.Context, m *Main) error {
	svc := disputes.New(disputes.Config{DB: m.DB, Logger: m.Logger, PushDelay: m.Config.SandboxPushDelay, WakeJobs: m.Jobs.Notify})
	api.RegisterDisputes(m.API, svc)
	m.disputeSvc = svc
	m.Jobs.Handle(disputes.OutcomeJob, svc.RunOutcomeJob)
	m.Jobs.Handle(payments.SandboxDisputeJob, svc.RunSandboxCardJob)
	m.PurgeTestMode("disputes")
	return nil
}

// disputeSettler applies dispute callbacks through the dispute service.
type disputeSettler struct{ m *Main }

func (s disputeSettler) ApplyProviderDispute(ctx context.Context, merchantID, provider string, d protocol.Dispute) error {
	return s.m.Disputes().ApplyProviderDispute(ctx, merchantID, provider, d)
}
