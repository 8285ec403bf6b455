package app

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/callbacks"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/live"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/reconciliation"
	"github.com/payd/payd/internal/store"
)

// providersWiring is one Main's live provider side.
type providersWiring struct {
	publicURL atomic.Value // string
	conns     *live.Connections
	recon     *reconciliation.Service
	callbacks *callbacks.Service
}

// Reconciliation returns the reconciliation service (payd reconcile); nil
// before wiring.
func (m *Main) Reconciliation() *reconciliation.Service {
	if m.providersW == nil {
		return nil
	}
	return m.providersW.recon
}

// LiveProviders returns the live provider connections; nil before wiring.
func (m *Main) LiveProviders() *live.Connections {
	if m.providersW == nil {
		return nil
	}
	return m.providersW.conns
}

// liveConnection reads a merchant's sealed provider connection through rd
// (the store.Work of the request asking for a rail), or on its own when rd
// is nil.
func (m *Main) liveConnection(ctx context.Context, rd providers.Reader, merchantID, provider string) (live.Connection, error) {
	var q store.RowQuerier = m.DB
	if rd != nil {
		q = rd
	}
	cfg, err := m.Merchants.ProviderConnection(ctx, q, merchantID, provider)
	if err != nil {
		return live.Connection{}, err
	}
	c := live.Connection{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, CallbackSecret: cfg.CallbackSecret}
	if cfg.Timeout != "" {
		if c.Timeout, err = time.ParseDuration(cfg.Timeout); err != nil {
			return live.Connection{}, errs.Internal(errors.New("the stored provider timeout is not a duration"))
		}
	}
	return c, nil
}

// payoutLedgerReferences maps the keys payouts were sent under to payout
// ids, for the settlement reconciliation.
func (m *Main) payoutLedgerReferences(ctx context.Context, merchantID string, refs []string) (map[string]string, error) {
	if m.Payouts() == nil {
		return map[string]string{}, nil
	}
	return m.Payouts().IDsByProviderKey(ctx, merchantID, refs)
}

// wireProviders builds the live provider connections, the callbacks and
// the reconciliation service, registers the live adapters of every payment
// provider on payments' registry, mounts the callback and reconciliation
// routes, and schedules the reconciliation job. The callbacks and the
// reconciliation reach payouts and refunds, wired after it, only while
// handling a callback or running a job.
func wireProviders(ctx context.Context, m *Main) error {
	w := &providersWiring{}
	w.publicURL.Store(m.Config.PublicURL)
	w.conns = live.NewConnections(live.Config{
		Lookup:       m.liveConnection,
		CallbackBase: func() string { return w.publicURL.Load().(string) },
		BreakerOpen:  m.Config.BreakerOpen,
		Logger:       m.Logger,
		Registry:     m.Registry,
	})
	w.recon = reconciliation.New(reconciliation.Config{
		DB:               m.DB,
		Report:           w.conns.SettlementReport,
		LedgerReferences: m.payoutLedgerReferences,
		Intents:          intentReconciler{m},
		Cards:            cardReconciler{m},
		Settlements:      intentReconciler{m},
		Timeout:          w.conns.Timeout,
		Interval:         m.Config.ReconcileInterval,
		Logger:           m.Logger,
		Counted:          w.conns.Reconciled,
	})
	w.callbacks = callbacks.New(callbacks.Config{
		DB:       m.DB,
		Secret:   w.conns.CallbackSecret,
		Payments: paymentSettler{m},
		Payouts:  payoutSettler{m},
		Refunds:  refundSettler{m},
		Disputes: disputeSettler{m},
		Logger:   m.Logger,
		Count:    w.conns.CallbackReceived,
	})
	m.providersW = w
	m.OnListen(func(u string) { w.publicURL.Store(u) })
	reg := m.PaymentProviders()
	for _, p := range providers.PaymentProviders {
		reg.RegisterLivePayments(p, w.conns.PaymentFactory(p))
	}
	api.RegisterProviderCallbacks(m.API, w.callbacks)
	api.RegisterReconciliation(m.API, w.recon)
	m.Jobs.Every(reconciliation.JobKind, m.Config.ReconcileInterval, w.recon.Run)
	m.Jobs.Every("provider_callbacks_prune", 24*time.Hour, func(ctx context.Context, _ jobs.Job) error {
		_, err := w.callbacks.Prune(ctx, 30*24*time.Hour)
		return err
	})
	return nil
}

// intentReconciler adapts the payments service to reconciliation.
type intentReconciler struct{ m *Main }

func (r intentReconciler) ReconcileIntent(ctx context.Context, id string) (string, error) {
	st, err := r.m.PaymentIntents().ReconcileIntent(ctx, id)
	return string(st), err
}

func (r intentReconciler) OpenSettlements(ctx context.Context, olderThan time.Time) ([]reconciliation.OpenSettlement, error) {
	open, err := r.m.PaymentIntents().OpenSettlements(ctx, olderThan)
	out := make([]reconciliation.OpenSettlement, len(open))
	for i, o := range open {
		out[i] = reconciliation.OpenSettlement{ID: o.ID, MerchantID: o.MerchantID, UpdatedAt: o.UpdatedAt}
	}
	return out, err
}

func (r intentReconciler) ReconcileSettlement(ctx context.Context, id string) (string, error) {
	st, err := r.m.PaymentIntents().ReconcileSettlement(ctx, id)
	return string(st), err
}

// paymentSettler applies payment callbacks through the payments service.
type paymentSettler struct{ m *Main }

func (s paymentSettler) ApplyProviderPayment(ctx context.Context, merchantID, provider string, p protocol.Payment) error {
	res, err := live.PaymentResult(p)
	if err != nil {
		return nil // a pending report with nothing new: nothing to apply
	}
	_, err = s.m.PaymentIntents().ApplyProviderResult(ctx, merchantID, provider, p.Reference, p.AmountMinor, p.Currency, res)
	return err
}

// payoutSettler applies payout callbacks through the payouts service.
type payoutSettler struct{ m *Main }

func (s payoutSettler) ApplyProviderPayout(ctx context.Context, merchantID, provider string, p protocol.Payout) error {
	return s.m.Payouts().ApplyProviderResult(ctx, merchantID, provider, p.Reference, p.AmountMinor, p.Currency, live.PayoutResult(p))
}
