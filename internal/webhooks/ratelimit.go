package webhooks

import (
	"context"
	"time"

	"github.com/payd/payd/internal/store"
)

// An endpoint's max_rate is kept as a generic cell rate (GCRA): per
// endpoint, the theoretical time the next attempt may start (next_at in
// webhook_endpoint_rates). Starting k attempts at now moves it to
// max(next_at, now) + k×interval, which may run at most a burst of
// intervals ahead of now. Claims read and write it inside their
// transaction, and claims are serialised across processes (claimLockID on
// PostgreSQL, one writer on SQLite), so processes sharing the database share
// one rate. Endpoints without a max_rate cost the claim nothing more.

// rateBurst is how many attempts may start at once after an idle spell:
// a tenth of a second's worth, at least one.
func rateBurst(maxRate int) int { return max(1, maxRate/10) }

// rateInterval is the time between attempt starts at maxRate per second.
func rateInterval(maxRate int) int64 { return time.Second.Microseconds() / int64(maxRate) }

// rateAllowance is how many attempts may start at now given next (the
// stored next_at, 0 if none), and when the first one held back may start.
func rateAllowance(maxRate int, next, now int64) (n int, wake int64) {
	iv := rateInterval(maxRate)
	base := max(next, now)
	n = int((now + int64(rateBurst(maxRate))*iv - base) / iv)
	n = max(n, 0)
	// The (n+1)th start needs base + (n+1)×iv <= t + burst×iv.
	wake = base + int64(n+1)*iv - int64(rateBurst(maxRate))*iv
	return n, max(wake, now+1)
}

// limitRates caps the due deliveries of rate-limited endpoints among work at
// what their rate allows now, and returns each one's stored next_at and the
// earliest time one of them held back may start (0: none held back).
func limitRates(ctx context.Context, tx *store.Tx, work []*dueWork, now int64) (next map[string]int64, wake int64, err error) {
	var ids []string
	for _, w := range work {
		if w.maxRate > 0 {
			ids = append(ids, w.endpointID)
		}
	}
	if len(ids) == 0 {
		return nil, 0, nil
	}
	next = make(map[string]int64, len(ids))
	ph, in := store.PaddedIn(ids)
	rows, err := tx.Query(ctx, "SELECT endpoint_id, next_at FROM webhook_endpoint_rates WHERE endpoint_id IN ("+ph+")", in...)
	if err != nil {
		return nil, 0, err
	}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			rows.Close()
			return nil, 0, err
		}
		next[id] = at
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	for _, w := range work {
		if w.maxRate <= 0 {
			continue
		}
		n, at := rateAllowance(w.maxRate, next[w.endpointID], now)
		if n < w.due {
			w.due = n
			if wake == 0 || at < wake {
				wake = at
			}
		}
	}
	return next, wake, nil
}

// spendRate records k attempts started now to a rate-limited endpoint.
func spendRate(ctx context.Context, tx *store.Tx, w *dueWork, next int64, k int, now int64) error {
	at := max(next, now) + int64(k)*rateInterval(w.maxRate)
	_, err := tx.Exec(ctx, `INSERT INTO webhook_endpoint_rates (endpoint_id, next_at) VALUES (?, ?)
		ON CONFLICT (endpoint_id) DO UPDATE SET next_at = excluded.next_at`, w.endpointID, at)
	return err
}
