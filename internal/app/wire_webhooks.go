package app

import (
	"context"
	"sync"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/webhooks"
)

// webhookServices holds every running webhooks service in the process, for
// the outbox's one wake-up hook (tests run several Mains in one process).
var webhookServices sync.Map // *Main -> *webhooks.Service

// Webhooks returns this process's webhooks service (for the portal: endpoint
// pages, deliveries, redeliver), or nil before Open.
func (m *Main) Webhooks() *webhooks.Service {
	return m.webhookSvc
}

// eventWake fans the outbox's after-commit wake-up out to every webhooks
// service in the process (tests run several Mains in one process;
// events.SetNotifier holds one notifier).
type eventWake struct{}

func (eventWake) Notify() {
	webhookServices.Range(func(_, v any) bool {
		v.(*webhooks.Service).Notify()
		return true
	})
}

var installWake sync.Once

// wireWebhooks builds the webhooks service, mounts its routes and starts
// its delivery worker.
func wireWebhooks(ctx context.Context, m *Main) error {
	box, err := secretbox.New(m.Config.SecretsKey)
	if err != nil {
		return err
	}
	svc := webhooks.New(webhooks.Config{DB: m.DB, Logger: m.Logger.With("capability", "webhooks"), Box: box,
		RetrySchedule: m.Config.WebhookRetrySchedule, Registry: m.Registry,
		BreakerFailures: breakerFailures(m.Config.WebhookBreakerFailures), BreakerPeriod: m.Config.WebhookBreakerPeriod})
	m.webhookSvc = svc
	webhookServices.Store(m, svc)
	installWake.Do(func() { events.SetNotifier(eventWake{}) })
	api.RegisterWebhooks(m.API, svc)
	m.PurgeTestMode("webhook_attempts", "webhook_deliveries", "sandbox_webhook_fail")
	m.OnStart(func(ctx context.Context) {
		// End open event streams when the server shuts down, so
		// http.Server.Shutdown does not wait for them.
		if m.server != nil {
			m.server.RegisterOnShutdown(svc.Close)
		}
		svc.Run(ctx)
	})
	m.OnClose(func() {
		svc.Close()
		webhookServices.Delete(m)
	})
	return nil
}

// breakerFailures maps the configuration (0: off) onto the service's
// (negative: off; 0 would mean the default).
func breakerFailures(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
