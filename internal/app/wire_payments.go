package app

import (
	"context"
	"sync"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/sandbox"
)

func init() { wirers = append(wirers, wirePayments) }

// paymentsWiring is one Main's payment side, built on first use so another
// capability's wirer can reach it whatever the wiring order.
type paymentsWiring struct {
	once     sync.Once
	svc      *payments.Service
	registry *providers.Registry
	sandbox  *sandbox.Sandbox
}

func (m *Main) payments() *paymentsWiring {
	if m.paymentsW == nil {
		m.paymentsW = &paymentsWiring{}
	}
	w := m.paymentsW
	w.once.Do(func() {
		w.sandbox = sandbox.New(sandbox.Config{PublicURL: m.Config.PublicURL, PushDelay: m.Config.SandboxPushDelay,
			TimeoutDelay: m.Config.SandboxTimeoutDelay})
		w.registry = providers.NewRegistry()
		w.registry.UseSandboxPayments(w.sandbox)
		w.svc = payments.NewService(payments.Config{DB: m.DB, Providers: w.registry, Logger: m.Logger, WakeJobs: m.Jobs.Notify})
	})
	return w
}

// PaymentIntents returns the payment intents service, for capabilities that
// record payments (terminals call RecordCardPresent).
func (m *Main) PaymentIntents() *payments.Service { return m.payments().svc }

// PaymentProviders returns the registry of payment adapters, where live
// adapters register (RegisterLivePayments).
func (m *Main) PaymentProviders() *providers.Registry { return m.payments().registry }

func wirePayments(ctx context.Context, m *Main) error {
	w := m.payments()
	m.OnListen(w.sandbox.SetPublicURL)
	api.RegisterPaymentIntents(m.API, w.svc)
	api.RegisterSandboxOverrides(m.API, w.svc)
	sandbox.NewPages(w.svc, m.Logger).Mount(m.API.Mux())
	m.Jobs.Handle(payments.PollJob, w.svc.RunPollJob)
	// Through the portal's (merchant_id, livemode, created_at) index: the
	// intents keep no index of their own for the purge (migration 2030).
	m.PurgeTestModeByMerchant("payment_intents")
	return nil
}
