package payouts

import (
	"context"
	"database/sql"
	"strings"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// A live provider knows a payout by the key payd sent it under
// (idempotencyKey) and reports on it in callbacks. A callback's outcome is
// recorded through the same compare-and-set as a dispatcher's answer, named
// by the payout's current claim: whichever of the two comes first settles
// the payout (one ledger posting, one payout.* event), and the other finds
// the claim gone.

// ApplyProviderResult records what a live provider reported in a callback
// about the merchant's payout sent under key. The report must match the
// payout (provider, amount, currency), else it is a 400 and nothing
// changes. A payout that is not processing (settled already, or never sent)
// is left as it is.
func (s *Service) ApplyProviderResult(ctx context.Context, merchantID, provider, key string, amount int64, currency string,
	res providers.PayoutResult) error {
	ctx = context.WithoutCancel(ctx)
	work := s.db.Within(store.NoClaim) // a callback or reconciliation: no request's unit
	for range 5 {
		p, err := payoutByKey(ctx, work, merchantID, true, key)
		if err != nil {
			return err
		}
		if p.Provider != provider || p.Amount != amount || p.Currency != currency {
			return errs.Invalid("data", "parameter_invalid", "the reported payout does not match payout %s (provider, amount or currency)", p.ID)
		}
		if p.Status != Processing || res.Outcome == providers.PayoutUnknown {
			return nil
		}
		var claimID sql.NullString
		if err := work.QueryRow(ctx, "SELECT claim_id FROM payouts WHERE id = ?", p.ID).Scan(&claimID); err != nil {
			return err
		}
		if !claimID.Valid {
			return nil
		}
		if err := s.record(ctx, work, &claim{id: claimID.String, batchID: p.BatchID}, []result{s.resultOf(p, res)}); err != nil {
			return err
		}
		// The claim may have changed between the two reads: try again.
		now, err := getPayout(ctx, work, merchantID, true, p.ID, false)
		if err != nil || now.Status != Processing {
			return err
		}
	}
	return nil
}

// IDsByProviderKey maps the keys a merchant's live payouts were sent under
// to their ids (settlement reconciliation); unknown keys are left out.
func (s *Service) IDsByProviderKey(ctx context.Context, merchantID string, keys []string) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range keys {
		p, err := payoutByKey(ctx, s.db, merchantID, true, k)
		if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[k] = p.ID
	}
	return out, nil
}

// payoutByKey finds a payout by its idempotency key: a single payout's
// reference, or a batch row's batch id, ":" and reference.
func payoutByKey(ctx context.Context, q store.Querier, merchantID string, livemode bool, key string) (*Payout, error) {
	const sel = "SELECT " + payoutColumns + " FROM payouts WHERE merchant_id = ? AND livemode = ? AND "
	p, err := scanPayout(q.QueryRow(ctx, sel+"batch_id IS NULL AND reference = ?", merchantID, livemode, key))
	if store.IsNotFound(err) {
		if batch, ref, ok := strings.Cut(key, ":"); ok {
			p, err = scanPayout(q.QueryRow(ctx, sel+"batch_id = ? AND reference = ?", merchantID, livemode, batch, ref))
		}
	}
	if store.IsNotFound(err) {
		return nil, errs.NotFound("payout", key)
	}
	return p, err
}
