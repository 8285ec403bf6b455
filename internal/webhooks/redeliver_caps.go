package webhooks

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

// Caps on redelivery, the one way a caller makes deliveries at will (each
// event otherwise gets one delivery per endpoint). Without them a loop of
// redeliver calls queues deliveries without bound.
const (
	// RedeliveryWindow is the window the redelivery counts cover.
	RedeliveryWindow = time.Hour
	// MaxRedeliveriesPerEventEndpoint bounds the redeliveries of one event
	// to one endpoint in the window.
	MaxRedeliveriesPerEventEndpoint = 5
	// MaxRedeliveriesPerMerchant bounds the deliveries redeliver makes for
	// one merchant and mode in the window.
	MaxRedeliveriesPerMerchant = 1000
	// MaxPendingPerEndpoint is the waiting queue of an endpoint beyond which
	// redeliver refuses to add to it, and beyond which an endpoint payd
	// disabled gets no new deliveries (dispatch.go); the events themselves
	// stay in the outbox and can be redelivered once it is resumed.
	MaxPendingPerEndpoint = 1000
)

// redeliverLockKey serialises the redeliveries of one merchant and mode on
// PostgreSQL, so two at once cannot both pass a count (SQLite's immediate
// transactions are one at a time already).
func redeliverLockKey(o Owner) string {
	return "webhook_redeliver:" + o.MerchantID + ":" + strconv.FormatBool(o.Livemode)
}

// checkRedeliveryCaps refuses (429) a redelivery of eventID to targets
// that would pass a cap: redelivery_rate_limited for the per-event-and-
// endpoint and per-merchant windows (with Retry-After), endpoint_queue_full
// when an endpoint already has MaxPendingPerEndpoint deliveries waiting.
func (s *Service) checkRedeliveryCaps(ctx context.Context, tx *store.Tx, o Owner, eventID string, targets []Endpoint) error {
	if len(targets) == 0 {
		return nil
	}
	if err := tx.AdvisoryLock(ctx, redeliverLockKey(o)); err != nil {
		return err
	}
	now := tx.Now()
	since := store.Micros(now.Add(-RedeliveryWindow))
	// Per event and endpoint.
	rows, err := tx.Query(ctx, `SELECT endpoint_id, COUNT(*), MIN(created_at) FROM webhook_deliveries
		WHERE event_id = ? AND redelivery = TRUE AND recovery = FALSE AND created_at > ? GROUP BY endpoint_id`, eventID, since)
	if err != nil {
		return err
	}
	type count struct {
		n      int
		oldest int64
	}
	perEndpoint := map[string]count{}
	for rows.Next() {
		var id string
		var c count
		if err := rows.Scan(&id, &c.n, &c.oldest); err != nil {
			rows.Close()
			return err
		}
		perEndpoint[id] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, ep := range targets {
		if c := perEndpoint[ep.ID]; c.n >= MaxRedeliveriesPerEventEndpoint {
			return rateLimited("redelivery_rate_limited", "endpoint_id", retryAfter(now, c.oldest),
				"event %s was already redelivered %d times in the last hour to webhook endpoint %s; try again later",
				eventID, c.n, ep.ID)
		}
	}
	// Queue depth per endpoint.
	for _, ep := range targets {
		n, err := countPending(ctx, tx, ep.ID)
		if err != nil {
			return err
		}
		if n >= MaxPendingPerEndpoint {
			e := rateLimited("endpoint_queue_full", "endpoint_id", 0,
				"webhook endpoint %s already has %d deliveries waiting; redeliver to it once they have been sent", ep.ID, n)
			return e
		}
	}
	// Per merchant and mode.
	var n int
	var oldest sql.NullInt64
	if err := tx.QueryRow(ctx, `SELECT COUNT(*), MIN(created_at) FROM webhook_deliveries
		WHERE merchant_id = ? AND livemode = ? AND redelivery = TRUE AND recovery = FALSE AND created_at > ?`, o.MerchantID, o.Livemode, since).Scan(&n, &oldest); err != nil {
		return err
	}
	if n+len(targets) > MaxRedeliveriesPerMerchant {
		return rateLimited("redelivery_rate_limited", "", retryAfter(now, oldest.Int64),
			"redeliveries made %d deliveries in the last hour, and at most %d are allowed; this one would make %d more: try again later",
			n, MaxRedeliveriesPerMerchant, len(targets))
	}
	return nil
}

// retryAfter is when the oldest redelivery counted leaves the window.
func retryAfter(now time.Time, oldestMicros int64) time.Duration {
	if oldestMicros == 0 {
		return 0
	}
	return max(time.Second, store.FromMicros(oldestMicros).Add(RedeliveryWindow).Sub(now))
}

func rateLimited(code, param string, after time.Duration, format string, args ...any) *errs.Error {
	e := &errs.Error{Kind: errs.KindRateLimited, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
	if after > 0 {
		e.Extra = map[string]any{"retry_after": strconv.Itoa(int((after + time.Second - 1) / time.Second))}
	}
	return e
}

// WaitingDeliveries counts an endpoint's pending deliveries, up to
// MaxPendingPerEndpoint (the portal's notice on an endpoint payd disabled).
func (s *Service) WaitingDeliveries(ctx context.Context, o Owner, endpointID string) (int, error) {
	if _, err := getEndpoint(ctx, s.db, o, endpointID); err != nil {
		return 0, err
	}
	return countPending(ctx, s.db, endpointID)
}

// countPending counts an endpoint's pending deliveries, up to
// MaxPendingPerEndpoint.
func countPending(ctx context.Context, q store.Querier, endpointID string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending' LIMIT ?) q`,
		endpointID, MaxPendingPerEndpoint).Scan(&n)
	return n, err
}
