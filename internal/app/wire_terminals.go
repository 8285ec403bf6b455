package app

import (
	"context"
	"time"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/providers/live"
	"github.com/payd/payd/internal/reconciliation"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/cardgateway"
)

// wireTerminals builds the terminal registry and card-present service on the
// payment intents service and mounts its routes.
func wireTerminals(ctx context.Context, m *Main) error {
	// The live key file is read once here and on SIGHUP; an unreadable or
	// malformed file stops the start, with an error that names the file
	// and the model, never a key.
	keys, err := terminals.NewKeys(m.Config.P2PEKeys)
	if err != nil {
		return err
	}
	if m.Config.P2PEKeys != "" {
		m.Logger.Info("P2PE live keys loaded", "models", keys.LiveModels())
	}
	// Live mode authorises through the merchant's live card gateway
	// connection (wallet_a, the card acquirer; wired by wireProviders);
	// without one, 503.
	gateways := cardgateway.Selector{Live: func(ctx context.Context, merchantID string) (*live.CardGateway, error) {
		return m.LiveProviders().CardGateway(ctx, merchantID)
	}}
	// The payments service records each outcome as a payment intent (with
	// its ledger credit and payment_intent.succeeded).
	svc := terminals.NewService(terminals.Config{DB: m.DB, Keys: keys, Gateways: gateways.Select,
		Recorder: m.PaymentIntents(), Logger: m.Logger, Holds: idempotency.Holds})
	api.RegisterTerminals(m.API, svc)
	m.PurgeTestMode("terminal_payments", "terminals")
	m.OnReload(func(ctx context.Context) {
		if err := keys.Reload(); err != nil {
			m.Logger.Error("P2PE key file not reloaded; the keys in use are kept", "err", err)
			return
		}
		m.Logger.Info("P2PE live keys reloaded", "models", keys.LiveModels())
	})
	m.terminalSvc = svc
	return nil
}

// Terminals returns the terminal registry and card-present service, for the
// capabilities that show terminals (the portal); nil before Open.
func (m *Main) Terminals() *terminals.Service { return m.terminalSvc }

// cardReconciler adapts the terminals service to reconciliation: live
// terminal payments whose authorisation got no answer.
type cardReconciler struct{ m *Main }

func (r cardReconciler) OpenAuthorizations(ctx context.Context, olderThan time.Time) ([]reconciliation.OpenAuthorization, error) {
	if r.m.Terminals() == nil {
		return nil, nil
	}
	open, err := r.m.Terminals().OpenAuthorizations(ctx, olderThan)
	out := make([]reconciliation.OpenAuthorization, len(open))
	for i, o := range open {
		out[i] = reconciliation.OpenAuthorization{ID: o.ID, MerchantID: o.MerchantID, UpdatedAt: o.UpdatedAt}
	}
	return out, err
}

func (r cardReconciler) ReconcileAuthorization(ctx context.Context, id string) (string, error) {
	return r.m.Terminals().ReconcileAuthorization(ctx, id)
}
