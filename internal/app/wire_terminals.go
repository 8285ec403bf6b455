package app

import (
	"context"

	"github.com/payd/payd/internal/api"
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
	// The payments service records each outcome as a payment intent (with
	// its ledger credit and payment_intent.succeeded).
	svc := terminals.NewService(terminals.Config{DB: m.DB, Keys: keys, Gateways: cardgateway.Select,
		Recorder: m.PaymentIntents(), Logger: m.Logger})
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
