package app

import (
	"context"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/sandbox"
)

// paymentsWiring is one Main's payment side.
type paymentsWiring struct {
	svc      *payments.Service
	registry *providers.Registry
	sandbox  *sandbox.Sandbox
}

// PaymentIntents returns the payment intents service, for capabilities that
// record payments (terminals call RecordCardPresent); nil before wiring.
func (m *Main) PaymentIntents() *payments.Service {
	if m.paymentsW == nil {
		return nil
	}
	return m.paymentsW.svc
}

// PaymentProviders returns the registry of payment adapters, where live
// adapters register (RegisterLivePayments); nil before wiring.
func (m *Main) PaymentProviders() *providers.Registry {
	if m.paymentsW == nil {
		return nil
	}
	return m.paymentsW.registry
}

// wirePayments builds the payment intents service on the registry of payment
// adapters (the sandbox's; the live ones register in wireProviders), mounts
// its routes and the sandbox's pages, and registers its poll job.
func wirePayments(ctx context.Context, m *Main) error {
	w := &paymentsWiring{}
	w.sandbox = sandbox.New(sandbox.Config{PublicURL: m.Config.PublicURL, PushDelay: m.Config.SandboxPushDelay,
		TimeoutDelay: m.Config.SandboxTimeoutDelay})
	w.registry = providers.NewRegistry()
	w.registry.UseSandboxPayments(w.sandbox)
	w.svc = payments.NewService(payments.Config{DB: m.DB, Providers: w.registry, Logger: m.Logger, WakeJobs: m.Jobs.Notify,
		Expiry: payments.Expiry{Action: m.Config.IntentExpiry, Capture: m.Config.CaptureWindow}, Holds: idempotency.Holds})
	m.paymentsW = w
	m.OnListen(w.sandbox.SetPublicURL)
	api.RegisterPaymentIntents(m.API, w.svc)
	api.RegisterSandboxOverrides(m.API, w.svc)
	sandbox.NewPages(w.svc, m.Logger).Mount(m.API.Mux())
	m.Jobs.Handle(payments.PollJob, w.svc.RunPollJob)
	// One row in jobs, so one process at a time runs it; a run that lost
	// its lease and a second process would still cancel each intent once
	// (compare-and-set).
	m.Jobs.Every(payments.ExpiryJob, payments.ExpiryInterval, w.svc.RunExpiryJob)
	// Through the portal's (merchant_id, livemode, created_at) index: the
	// intents keep no index of their own for the purge (migration 2030).
	m.PurgeTestModeByMerchant("payment_intents")
	return nil
}
