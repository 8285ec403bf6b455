package app

import (
	"context"
	"time"

	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/retention"
)

// wiring lists the capabilities in dependency order: each builds its
// service, routes, jobs and hooks (wire_<name>.go) and finds every service
// it uses already built by a step above it. A new capability adds its step
// here, below what it uses.
var wiring = []func(ctx context.Context, m *Main) error{
	wirePayments,   // the payment intents service and the payment adapters' registry
	wireProviders,  // live provider connections, callbacks, reconciliation: on payments' registry
	wirePayouts,    // on the sanctions list and the live connections
	wireRefunds,    // on the live connections
	wireDisputes,   // on payments (the intent side) and refunds (charge_disputed)
	wireBilling,    // on payments
	wireReports,    // on payments and refunds
	wireTerminals,  // on payments
	wireBanking,    // on the sanctions list
	wireWebhooks,   // the outbox's delivery
	wireRequestLog, // the API's request log
	wireAPIDocs,    // the reference at /docs
	wirePortal,     // last: it shows every capability's objects
}

// RetentionInterval is how often the retention job deletes what the
// retention policy no longer keeps: often enough that each run removes
// about ten minutes' worth of records.
const RetentionInterval = 10 * time.Minute

// wire loads the sanctions list, runs every step of wiring in order, then
// registers the sandbox purge over the tables the capabilities declared and
// the retention job.
func (m *Main) wire(ctx context.Context) error {
	policy := m.Config.Retention
	if policy == (retention.Policy{}) {
		policy = retention.DefaultPolicy
	}
	if err := policy.Validate(); err != nil {
		return err
	}
	if err := m.loadSanctions(ctx); err != nil {
		return err
	}
	for _, step := range wiring {
		if err := step(ctx, m); err != nil {
			return err
		}
	}
	purger := &retention.Purger{DB: m.DB, Tables: append([]retention.Table{}, m.purgeTables...)}
	purger.Tables = append(purger.Tables, retention.Table{Name: "events"})
	m.Jobs.Every("sandbox_purge", time.Hour, func(ctx context.Context, _ jobs.Job) error {
		res, err := purger.Run(ctx)
		if err == nil {
			m.Logger.Info("sandbox purge", "rows", res.Rows, "ledger_transactions", res.LedgerTransactions)
		}
		return err
	})
	horizons := &retention.Horizons{DB: m.DB, Policy: policy}
	m.Jobs.Every("retention", RetentionInterval, func(ctx context.Context, _ jobs.Job) error {
		r, err := horizons.Run(ctx)
		if err == nil && r != (retention.Removed{}) {
			m.Logger.Info("retention", "removed", r)
		}
		return err
	})
	return nil
}

// PurgeTestMode declares tables whose test-mode rows older than 30 days the
// sandbox purge deletes (each needs livemode and created_at columns). Child
// tables go first.
func (m *Main) PurgeTestMode(tables ...string) {
	for _, t := range tables {
		m.purgeTables = append(m.purgeTables, retention.Table{Name: t})
	}
}

// PurgeTestModeByMerchant declares a table the sandbox purge deletes from
// merchant by merchant (retention.Table.ByMerchant): the table has an index
// beginning (merchant_id, livemode, created_at) and none of its own for the
// purge.
func (m *Main) PurgeTestModeByMerchant(table string) {
	m.purgeTables = append(m.purgeTables, retention.Table{Name: table, ByMerchant: true})
}

// OnStart registers a long-running worker started by Run (when workers are
// enabled) on a context cancelled by Close; Close waits for it.
func (m *Main) OnStart(f func(ctx context.Context)) { m.starters = append(m.starters, f) }

// OnListen registers a hook told the public URL once the server listens
// (it changes when Addr is port 0).
func (m *Main) OnListen(f func(publicURL string)) { m.listeners = append(m.listeners, f) }

// OnReload registers a hook run on SIGHUP.
func (m *Main) OnReload(f func(ctx context.Context)) { m.reloaders = append(m.reloaders, f) }

// OnClose registers a hook run by Close after the workers stop.
func (m *Main) OnClose(f func()) { m.closers = append(m.closers, f) }

// startWorkers starts the capabilities' long-running workers.
func (m *Main) startWorkers(ctx context.Context) {
	for _, f := range m.starters {
		m.wg.Add(1)
		go func(f func(context.Context)) {
			defer m.wg.Done()
			f(ctx)
		}(f)
	}
}

// publicURLChanged tells the capabilities the real public URL.
func (m *Main) publicURLChanged() {
	for _, f := range m.listeners {
		f(m.Config.PublicURL)
	}
}
