package app

import (
	"context"
	"time"

	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/portal"
	"github.com/payd/payd/internal/secretbox"
)

// wirePortal mounts the merchant portal under /portal on the API's router (so it
// passes the same request-id, logging and metrics middleware). It is wired
// last, so every capability's service exists; the portal takes them as
// accessors, each called while serving a page.
func wirePortal(ctx context.Context, m *Main) error {
	box, err := secretbox.New(m.Config.SecretsKey)
	if err != nil {
		return err
	}
	p, err := portal.New(portal.Config{DB: m.DB, Merchants: m.Merchants, Box: box, Logger: m.Logger, PublicURL: m.Config.PublicURL, Uploads: m.Uploads,
		SanctionsReady: func() bool { s := m.Sanctions(); return s != nil && s.Ready() }})
	if err != nil {
		return err
	}
	p.WithPayments(m.PaymentIntents)
	p.WithPayouts(m.Payouts)
	p.WithRefunds(m.Refunds)
	p.WithDisputes(m.Disputes)
	p.WithBanking(m.Banking)
	p.WithTerminals(m.Terminals)
	p.WithWebhooks(m.Webhooks)
	p.WithReports(m.Reports)
	p.WithBilling(m.Billing)
	p.Register(m.API.Mux())
	m.Jobs.Every("portal_cleanup", time.Hour, func(ctx context.Context, _ jobs.Job) error { return p.Cleanup(ctx) })
	return nil
}
