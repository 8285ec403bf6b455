package payments

import (
	"context"
	"strconv"
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

// DayVolume is one UTC day's succeeded payment intents in one currency.
type DayVolume struct {
	Day            time.Time // midnight UTC
	Currency       string
	Succeeded      int
	SucceededMinor int64
}

// microsPerDay turns a stored timestamp (microseconds) into its UTC day by
// integer division, the same on both engines.
const microsPerDay = int64(24 * time.Hour / time.Microsecond)

// DailyVolumeSince sums the principal's intents created on each UTC day from
// since's day on that have succeeded, per currency, oldest day first (the
// portal's 30-day chart). It reads the (merchant_id, livemode, created_at)
// range of the period only.
func (s *Service) DailyVolumeSince(ctx context.Context, p auth.Principal, since time.Time) ([]DayVolume, error) {
	from := since.UTC().Truncate(24 * time.Hour)
	// The divisor is a constant in the text (not a parameter) so that
	// PostgreSQL sees one expression in SELECT and GROUP BY.
	rows, err := s.db.Query(ctx, `SELECT created_at / `+strconv.FormatInt(microsPerDay, 10)+`, currency, COUNT(*), COALESCE(SUM(amount_captured_minor), 0)
		FROM payment_intents WHERE merchant_id = ? AND livemode = ? AND created_at >= ? AND status = 'succeeded'
		GROUP BY 1, 2 ORDER BY 1, 2`, p.MerchantID, p.Livemode, store.Micros(from))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DayVolume
	for rows.Next() {
		var v DayVolume
		var day int64
		if err := rows.Scan(&day, &v.Currency, &v.Succeeded, &v.SucceededMinor); err != nil {
			return nil, err
		}
		v.Day = time.Unix(day*86400, 0).UTC()
		out = append(out, v)
	}
	return out, rows.Err()
}
