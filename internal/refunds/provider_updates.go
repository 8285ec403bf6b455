package refunds

import (
	"context"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// A live refund is reported on three ways: the answer of the call that sent
// it, the provider's signed callbacks, and reconciliation's status queries.
// Each is recorded by record, a compare-and-set from pending, so whichever
// comes first settles the refund (one posting, one refund.* event) and the
// others find nothing left to do.

// ApplyProviderResult records what a live provider reported in a callback
// about the merchant's refund id. The report must match the refund
// (provider, amount, currency), else it is a 400 and nothing changes; a
// refund no longer pending is left as it is.
func (s *Service) ApplyProviderResult(ctx context.Context, merchantID, provider, id string, amount int64, currency string,
	res providers.RefundResult) error {
	ctx = context.WithoutCancel(ctx)
	r, err := get(ctx, s.db, merchantID, true, id)
	if err != nil {
		return err
	}
	if r.Provider != provider || r.AmountMinor != amount || r.Currency != currency {
		return errs.Invalid("data", "parameter_invalid", "the reported refund does not match refund %s (provider, amount or currency)", r.ID)
	}
	if r.Status != Pending || res.Outcome == providers.RefundPending {
		return nil
	}
	_, err = s.record(ctx, s.db.Within(store.NoClaim), r.ID, res)
	return err
}

// ReconcileJob is the periodic job that asks live providers about refunds
// left pending.
const ReconcileJob = "refund_reconcile"

// reconcileBatch bounds the refunds one run asks about.
const reconcileBatch = 200

// Reconcile is ReconcileJob: every live refund pending for longer than
// after since it last changed (its provider's call got no answer, or payd
// stopped before recording it) is asked about, and sent again under the
// same key when its provider never received it. The answer is recorded as
// a compare-and-set, so a callback or another process settling it first is
// harmless.
func (s *Service) Reconcile(after time.Duration) jobs.Handler {
	return func(ctx context.Context, _ jobs.Job) error {
		cutoff := store.Micros(s.db.Now().Add(-after))
		rows, err := s.db.Query(ctx, "SELECT "+columns+` FROM refunds WHERE status = 'pending' AND livemode = ? AND updated_at <= ?
			ORDER BY updated_at LIMIT ?`, true, cutoff, reconcileBatch)
		if err != nil {
			return err
		}
		var open []*Refund
		for rows.Next() {
			r, err := scanRefund(rows)
			if err != nil {
				rows.Close()
				return err
			}
			open = append(open, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range open {
			if err := s.ask(ctx, r, true); err != nil {
				s.log.Warn("refund reconciliation: no answer yet", "refund", r.ID, "provider", r.Provider, "err", err)
			}
		}
		return nil
	}
}
