package app

import (
	"context"
	"sync/atomic"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/billing"
	"github.com/payd/payd/internal/billing/hosted"
	"github.com/payd/payd/internal/secretbox"
)

// Billing: customers, subscriptions, invoices and test clocks. The service
// registers its status hook on the payment intents service, so an
// invoice's payment outcome commits with the payment; the real-time
// billing clock is a periodic job, a test clock's advance a queued one.

type billingWiring struct {
	svc       *billing.Service
	publicURL atomic.Value // string
}

// Billing returns the billing service (nil before wiring).
func (m *Main) Billing() *billing.Service {
	if m.billingW == nil {
		return nil
	}
	return m.billingW.svc
}

// wireBilling builds the billing service on the payment intents service.
func wireBilling(ctx context.Context, m *Main) error {
	w := &billingWiring{}
	// Hosted invoice links are HMACs under a key derived for them alone,
	// never the sealing key's text. Links made before under that text keep
	// opening (LegacyLinkKey); with no secrets key no link opens.
	linkKey, err := secretbox.DeriveKey(m.Config.SecretsKey, "hosted invoice link")
	if err != nil {
		return err
	}
	var legacy []byte
	if m.Config.SecretsKey != "" {
		legacy = []byte(m.Config.SecretsKey)
	}
	w.publicURL.Store(m.Config.PublicURL)
	m.OnListen(func(u string) { w.publicURL.Store(u) })
	w.svc = billing.NewService(billing.Config{DB: m.DB, Payments: m.PaymentIntents(), RetrySchedule: m.Config.BillingRetrySchedule,
		PublicURL: func() string { return w.publicURL.Load().(string) }, Logger: m.Logger, WakeJobs: m.Jobs.Notify,
		LinkKey: linkKey, LegacyLinkKey: legacy})
	m.billingW = w
	api.RegisterCustomers(m.API, w.svc)
	api.RegisterSubscriptions(m.API, w.svc)
	api.RegisterInvoices(m.API, w.svc)
	api.RegisterTestClocks(m.API, w.svc)
	hosted.New(w.svc, m.Merchants, m.Logger).Mount(m.API.Mux())
	m.Jobs.Every(billing.ClockJob, billing.ClockInterval, w.svc.RunClockJob)
	m.Jobs.Handle(billing.AdvanceJob, w.svc.RunAdvanceJob)
	m.Jobs.Handle(billing.AttemptJob, w.svc.RunAttemptJob)
	m.PurgeTestMode("invoices", "subscriptions", "customers", "test_clocks")
	return nil
}
