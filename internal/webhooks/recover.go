package webhooks

import (
	"context"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/store"
)

// Recovering an endpoint's failed deliveries: after an outage on the
// receiver's side outlasted the retries, one call sends again every delivery
// to the endpoint that ended failed since a time. Each gets a new delivery of
// the same event (so the event id, the receiver's de-duplication key, is
// unchanged), due at once; they wait their turn in the same claim as every
// other delivery, under the same per-endpoint and per-merchant caps and the
// endpoint's max_rate, so a large recovery cannot starve other endpoints.
const (
	// MaxRecoverPerCall bounds the deliveries one call makes; the answer's
	// has_more says when more remain. A call is one transaction holding the
	// endpoint's row (and, on SQLite, the database's one writer): 1,000
	// rows hold them about a tenth of what 10,000 did (0.5 s on SQLite and
	// 1.6 s on PostgreSQL, measured on a loaded machine).
	MaxRecoverPerCall = 1000
	// MaxRecoverQueue bounds an endpoint's waiting queue: a call makes no
	// more deliveries than keep it at or under this many.
	MaxRecoverQueue = 10000
	// RecoverWindow is how far back since may go.
	RecoverWindow = 30 * 24 * time.Hour
)

// Recovery is the answer to a recover call.
type Recovery struct {
	Object     string `json:"object"` // "webhook_recovery"
	EndpointID string `json:"endpoint_id"`
	Since      Time   `json:"since"`
	// Queued is how many failed deliveries this call sent again.
	Queued int `json:"queued"`
	// HasMore is true when failed deliveries since then remain (the call's
	// cap, or the endpoint's queue, stopped it): call again later.
	HasMore bool `json:"has_more"`
}

// CheckRecoverSince refuses a since in the future or older than
// RecoverWindow (400 naming since).
func CheckRecoverSince(since, now time.Time) error {
	if since.After(now) {
		return errs.Invalid("since", "parameter_invalid", "since must not be in the future (it is a unix time in seconds)")
	}
	if since.Before(now.Add(-RecoverWindow)) {
		return errs.Invalid("since", "parameter_invalid", "since must be within the last %d days", int(RecoverWindow/(24*time.Hour)))
	}
	return nil
}

// Recover sends again the endpoint's failed deliveries made since then
// (oldest first), each at most once however often it is called: a
// recovered delivery is marked, and a delivery made by recovery that fails
// can itself be recovered later. Deliveries of one event are sent once per
// call. The endpoint must be enabled (409 otherwise). It writes in the unit
// of work of the request cl claims (store.NoClaim: on its own).
func (s *Service) Recover(ctx context.Context, cl store.Claim, o Owner, endpointID string, since time.Time) (Recovery, error) {
	out := Recovery{Object: "webhook_recovery", EndpointID: endpointID, Since: Time{since.UTC().Truncate(time.Second)}}
	if err := CheckRecoverSince(since, s.db.Now()); err != nil {
		return out, err
	}
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		out.Queued, out.HasMore = 0, false
		// Locked: two recover calls on one endpoint take turns, so each
		// failed delivery is recovered once.
		ep, err := readEndpoint(ctx, tx, o, endpointID, tx.Dialect().ForUpdate())
		if err != nil {
			return err
		}
		if ep.Status != EndpointEnabled {
			return errs.InvalidState("webhook endpoint %s is disabled; enable it before recovering its failed deliveries", endpointID)
		}
		var waiting int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending' LIMIT ?) q`,
			endpointID, MaxRecoverQueue).Scan(&waiting); err != nil {
			return err
		}
		limit := min(MaxRecoverPerCall, MaxRecoverQueue-waiting)
		now := store.Micros(tx.Now())
		var failed []string // event ids, in order
		if limit > 0 {
			rows, err := tx.Query(ctx, `UPDATE webhook_deliveries SET recovered_at = ?, updated_at = ?
				WHERE id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = ? AND merchant_id = ? AND livemode = ?
					AND status = 'failed' AND recovered_at IS NULL AND created_at >= ?
					ORDER BY endpoint_id, created_at, id LIMIT ?)
				RETURNING event_id`, now, now, endpointID, o.MerchantID, o.Livemode, store.Micros(since), limit)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				failed = append(failed, id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		var more int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ? AND merchant_id = ? AND livemode = ?
			AND status = 'failed' AND recovered_at IS NULL AND created_at >= ? LIMIT 1) q`,
			endpointID, o.MerchantID, o.Livemode, store.Micros(since)).Scan(&more); err != nil {
			return err
		}
		out.HasMore = more > 0
		rows, err := s.recoveryRows(ctx, tx, o, endpointID, failed)
		if err != nil {
			return err
		}
		made, err := insertDeliveries(ctx, tx, rows, true)
		out.Queued = len(made)
		return err
	})
	if err != nil {
		return Recovery{}, err
	}
	if out.Queued > 0 {
		s.metrics.recovered.Add(float64(out.Queued))
		s.wakeDelivery()
	}
	return out, nil
}

// recoveryRows makes the new deliveries for failed deliveries' events: one
// per event still kept (a purged event could not be sent), marked as
// recovery, under sandbox_webhook_fail when its object is.
func (s *Service) recoveryRows(ctx context.Context, tx *store.Tx, o Owner, endpointID string, eventIDs []string) ([]newDelivery, error) {
	seen := map[string]bool{}
	var uniq []string
	for _, id := range eventIDs {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	byID := map[string]*events.Event{}
	for rest := uniq; len(rest) > 0; {
		chunk := rest[:min(len(rest), 500)]
		rest = rest[len(chunk):]
		ph, in := store.PaddedIn(chunk)
		rows, err := tx.Query(ctx, "SELECT "+events.Columns+" FROM events WHERE merchant_id = ? AND livemode = ? AND id IN ("+ph+")",
			append([]any{o.MerchantID, o.Livemode}, in...)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			ev, err := events.Scan(rows)
			if err != nil {
				rows.Close()
				return nil, err
			}
			byID[ev.ID] = &ev
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	marked := map[string]bool{}
	if !o.Livemode {
		var objectIDs []string
		for _, ev := range byID {
			objectIDs = append(objectIDs, ev.ObjectID)
		}
		var err error
		if marked, err = webhookFailMarked(ctx, tx, objectIDs); err != nil {
			return nil, err
		}
	}
	out := make([]newDelivery, 0, len(byID))
	for _, id := range uniq {
		if ev := byID[id]; ev != nil {
			out = append(out, newDelivery{ev: ev, endpointID: endpointID, failFirst: marked[ev.ObjectID], recovery: true})
		}
	}
	return out, nil
}
