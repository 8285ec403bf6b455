// Package reconciliation settles what live providers left open and checks
// what they settled: a background job asks the provider about every live
// payment intent left processing or requires_action past its provider's
// timeout and records the answer exactly once (and likewise every live
// terminal payment whose card authorisation got no answer, asked about by
// its reference at the card gateway); and the settlement
// reconciliation compares a provider's daily report with the ledger and
// lists every discrepancy (docs/providers.md, Reconciliation).
package reconciliation

import (
	"context"
	"log/slog"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/store"
)

// Config is what the service needs.
type Config struct {
	DB *store.DB
	// Report fetches a provider's settlement report of a UTC day for a
	// merchant (live.Connections.SettlementReport).
	Report func(ctx context.Context, merchantID, provider, date string) (protocol.SettlementReport, error)
	// LedgerReferences maps the references a provider reports to the
	// ledger's (payd's object ids): payouts are known to providers by their
	// idempotency keys. Nil maps every reference to itself.
	LedgerReferences func(ctx context.Context, merchantID string, refs []string) (map[string]string, error)
	// Intents settles live intents left open (payments.Service).
	Intents IntentReconciler
	// Cards settles live terminal payments whose card authorisation got no
	// answer (terminals.Service); nil: none.
	Cards CardReconciler
	// Settlements finishes captures and releases of live held card
	// authorisations whose answer was lost (payments.Service); nil: none.
	Settlements SettlementReconciler
	// Timeout returns a merchant's call timeout for a provider.
	Timeout func(ctx context.Context, merchantID, provider string) time.Duration
	// Interval is how often the job runs (PAYD_RECONCILE_INTERVAL).
	Interval time.Duration
	Logger   *slog.Logger
	// Counted is told each reconciled object's outcome (metrics).
	Counted func(kind, outcome string)
}

// Service reconciles.
type Service struct{ cfg Config }

// New makes the service.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Counted == nil {
		cfg.Counted = func(string, string) {}
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 30 * time.Second
	}
	return &Service{cfg: cfg}
}

// Settlement compares a provider's report of date (YYYY-MM-DD, UTC) with a
// merchant's ledger in live mode.
func (s *Service) Settlement(ctx context.Context, merchantID string, livemode bool, provider, date string) (SettlementReconciliation, error) {
	if !providers.Known(provider, providers.All) {
		return SettlementReconciliation{}, errs.Invalid("provider", "parameter_invalid", "unknown provider %q", provider)
	}
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return SettlementReconciliation{}, errs.Invalid("date", "parameter_invalid", "date must be a day as YYYY-MM-DD")
	}
	if !livemode {
		return SettlementReconciliation{}, &errs.Error{Kind: errs.KindInvalid, Code: "live_mode_only",
			Message: "settlement reports come from live providers; use a live key (the sandbox has none)"}
	}
	rep, err := s.cfg.Report(ctx, merchantID, provider, date)
	if err != nil {
		return SettlementReconciliation{}, err
	}
	refs := make([]string, 0, len(rep.Entries))
	for _, e := range rep.Entries {
		refs = append(refs, e.Reference)
	}
	mapped := map[string]string{}
	if s.cfg.LedgerReferences != nil && len(refs) > 0 {
		if mapped, err = s.cfg.LedgerReferences(ctx, merchantID, refs); err != nil {
			return SettlementReconciliation{}, err
		}
	}
	resolve := func(ref string) string {
		if m, ok := mapped[ref]; ok {
			return m
		}
		return ref
	}
	ledgerRefs := make([]string, len(refs))
	for i, r := range refs {
		ledgerRefs[i] = resolve(r)
	}
	moves, err := ledger.ProviderMovements(ctx, s.cfg.DB, merchantID, true, provider, day, day.AddDate(0, 0, 1), ledgerRefs)
	if err != nil {
		return SettlementReconciliation{}, err
	}
	out, err := Compare(provider, day, rep, moves, resolve)
	if err != nil {
		return out, err
	}
	out.Livemode = true
	out.GeneratedAt = s.cfg.DB.Now().Truncate(time.Second)
	return out, nil
}
