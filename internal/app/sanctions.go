package app

import (
	"context"
	"fmt"
	"time"

	"github.com/payd/payd/internal/screening"
)

// warnNoSanctionsList tells the operator of a serving process what running
// without a list means.
func (m *Main) warnNoSanctionsList() {
	if m.Config.SanctionsList == "" {
		m.Logger.Warn("no sanctions list configured (PAYD_SANCTIONS_LIST): live payouts and transfers are refused " +
			"with 503 screening_unavailable until one is; test mode runs unscreened")
	}
}

// Sanctions returns the sanctions screener loaded from PAYD_SANCTIONS_LIST,
// shared by payouts and bank transfers and reloaded on SIGHUP; with no list
// configured it answers not_screened.
func (m *Main) Sanctions() *screening.Screener { return m.sanctions }

// loadSanctions loads the list once for every capability that screens. A
// list that is configured but cannot be loaded stops the start rather than
// letting payouts and transfers through unscreened; a failed reload keeps
// the list in use.
func (m *Main) loadSanctions(ctx context.Context) error {
	scr := screening.NewScreener(m.Config.SanctionsList, screening.Options{})
	m.sanctions = scr
	if m.Config.SanctionsList == "" {
		return nil // Run warns: it concerns a serving process, not the CLI's commands
	}
	start := time.Now()
	if err := scr.Reload(ctx); err != nil {
		return fmt.Errorf("PAYD_SANCTIONS_LIST: %w", err)
	}
	m.Logger.Info("sanctions list loaded", "entries", scr.Size(), "lists", scr.List().Lists(), "took_ms", time.Since(start).Milliseconds())
	m.OnReload(func(ctx context.Context) {
		if err := scr.Reload(ctx); err != nil {
			m.Logger.Error("sanctions list reload failed; the previous list stays in use", "err", err)
			return
		}
		m.Logger.Info("sanctions list reloaded", "entries", scr.Size(), "lists", scr.List().Lists())
	})
	return nil
}
