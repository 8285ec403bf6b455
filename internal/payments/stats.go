package payments

import (
	"context"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/store"
)

// ProviderVolume is one provider's payment intents in one currency over a
// period: how many were created, how many succeeded, and the amount captured
// by those that succeeded.
type ProviderVolume struct {
	Provider       string
	Currency       string
	Attempts       int
	Succeeded      int
	SucceededMinor int64
}

// VolumeSince sums the principal's intents created at or after since, per
// provider and currency, ordered by currency then provider (the portal's
// dashboard chart). The portal's migration indexes (merchant_id, livemode,
// created_at) so this reads only the period's rows.
func (s *Service) VolumeSince(ctx context.Context, p auth.Principal, since time.Time) ([]ProviderVolume, error) {
	rows, err := s.db.Query(ctx, `SELECT provider, currency, COUNT(*),
			COALESCE(SUM(CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN status = 'succeeded' THEN amount_captured_minor ELSE 0 END), 0)
		FROM payment_intents WHERE merchant_id = ? AND livemode = ? AND created_at >= ?
		GROUP BY provider, currency ORDER BY currency, provider`, p.MerchantID, p.Livemode, store.Micros(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ProviderVolume
	for rows.Next() {
		var v ProviderVolume
		if err := rows.Scan(&v.Provider, &v.Currency, &v.Attempts, &v.Succeeded, &v.SucceededMinor); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
