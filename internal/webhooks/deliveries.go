package webhooks

import (
	"context"
	"database/sql"
	"strings"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// Delivery is one event sent to one endpoint.
type Delivery struct {
	ID            string    `json:"id"`
	Object        string    `json:"object"` // "webhook_delivery"
	EventID       string    `json:"event_id"`
	EndpointID    string    `json:"endpoint_id"`
	Status        string    `json:"status"` // pending, succeeded, failed
	Attempts      []Attempt `json:"attempts"`
	NextAttemptAt *Time     `json:"next_attempt_at"`

	attemptCount int
}

// Attempt is one try at a delivery.
type Attempt struct {
	At         Time    `json:"at"`
	HTTPStatus *int    `json:"http_status"`
	LatencyMS  int64   `json:"latency_ms"`
	Error      *string `json:"error"`
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

const deliveryColumns = "id, event_id, endpoint_id, status, attempt_count, next_attempt_at"

func scanDelivery(row interface{ Scan(...any) error }) (Delivery, error) {
	var d Delivery
	var next sql.NullInt64
	if err := row.Scan(&d.ID, &d.EventID, &d.EndpointID, &d.Status, &d.attemptCount, &next); err != nil {
		return d, err
	}
	d.Object = "webhook_delivery"
	d.NextAttemptAt = timePtr(store.NullMicros(next))
	d.Attempts = []Attempt{}
	return d, nil
}

// loadAttempts fills in the attempts of deliveries.
func loadAttempts(ctx context.Context, q store.Querier, ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	byID := make(map[string]*Delivery, len(ds))
	args := make([]any, len(ds))
	for i := range ds {
		byID[ds[i].ID] = &ds[i]
		args[i] = ds[i].ID
	}
	rows, err := q.Query(ctx, `SELECT delivery_id, at, http_status, latency_ms, error FROM webhook_attempts
		WHERE delivery_id IN (`+store.Placeholders(len(ds))+`) ORDER BY id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var at, latency int64
		var status sql.NullInt64
		var msg sql.NullString
		if err := rows.Scan(&id, &at, &status, &latency, &msg); err != nil {
			return err
		}
		a := Attempt{At: Time{store.FromMicros(at)}, LatencyMS: latency}
		if status.Valid {
			v := int(status.Int64)
			a.HTTPStatus = &v
		}
		if msg.Valid {
			a.Error = &msg.String
		}
		if d := byID[id]; d != nil {
			d.Attempts = append(d.Attempts, a)
		}
	}
	return rows.Err()
}

// GetEvent returns one event of the owner.
func (s *Service) GetEvent(ctx context.Context, o Owner, id string) (events.Event, error) {
	ev, err := events.Get(ctx, s.db, o.MerchantID, o.Livemode, id)
	if store.IsNotFound(err) {
		return ev, errs.NotFound("event", id)
	}
	return ev, err
}

// EventFilter narrows a list of events.
type EventFilter struct {
	// Type is an event type, or a prefix ending ".*" ("payout.*").
	Type            string
	RelatedObjectID string
}

// ListEvents returns a page of the owner's events, newest first.
func (s *Service) ListEvents(ctx context.Context, o Owner, f EventFilter, page pagination.Page) ([]events.Event, bool, error) {
	where := " WHERE merchant_id = ? AND livemode = ?"
	args := []any{o.MerchantID, o.Livemode}
	if f.Type != "" {
		if prefix, ok := strings.CutSuffix(f.Type, ".*"); ok {
			where += " AND type LIKE ?"
			args = append(args, escapeLike(prefix)+".%")
			where += ` ESCAPE '\'`
		} else {
			where += " AND type = ?"
			args = append(args, f.Type)
		}
	}
	if f.RelatedObjectID != "" {
		where += " AND object_id = ?"
		args = append(args, f.RelatedObjectID)
	}
	cond, cargs, tail := page.Clause("id")
	rows, err := s.db.Query(ctx, "SELECT "+events.Columns+" FROM events"+where+cond+tail, append(args, cargs...)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []events.Event
	for rows.Next() {
		ev, err := events.Scan(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(page, out)
	return out, more, nil
}

func escapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// ListDeliveries returns a page of an event's deliveries, newest first.
func (s *Service) ListDeliveries(ctx context.Context, o Owner, eventID string, page pagination.Page) ([]Delivery, bool, error) {
	if _, err := s.GetEvent(ctx, o, eventID); err != nil {
		return nil, false, err
	}
	return s.listDeliveries(ctx, o, "event_id", eventID, page)
}

func (s *Service) listDeliveries(ctx context.Context, o Owner, col, val string, page pagination.Page) ([]Delivery, bool, error) {
	cond, args, tail := page.Clause("id")
	rows, err := s.db.Query(ctx, "SELECT "+deliveryColumns+` FROM webhook_deliveries
		WHERE `+col+` = ? AND merchant_id = ? AND livemode = ?`+cond+tail, append([]any{val, o.MerchantID, o.Livemode}, args...)...)
	if err != nil {
		return nil, false, err
	}
	var out []Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return nil, false, err
		}
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(page, out)
	if err := loadAttempts(ctx, s.db, out); err != nil {
		return nil, false, err
	}
	return out, more, nil
}

// ListEndpointDeliveries returns a page of an endpoint's deliveries, newest
// first (the portal's endpoint page).
func (s *Service) ListEndpointDeliveries(ctx context.Context, o Owner, endpointID string, page pagination.Page) ([]Delivery, bool, error) {
	var n int
	if err := s.db.QueryRow(ctx, "SELECT COUNT(*) FROM webhook_endpoints WHERE id = ? AND merchant_id = ? AND livemode = ?",
		endpointID, o.MerchantID, o.Livemode).Scan(&n); err != nil {
		return nil, false, err
	}
	if n == 0 {
		return nil, false, errs.NotFound("webhook_endpoint", endpointID)
	}
	return s.listDeliveries(ctx, o, "endpoint_id", endpointID, page)
}

// GetDelivery returns one delivery of the owner.
func (s *Service) GetDelivery(ctx context.Context, o Owner, id string) (Delivery, error) {
	d, err := scanDelivery(s.db.QueryRow(ctx, "SELECT "+deliveryColumns+` FROM webhook_deliveries
		WHERE id = ? AND merchant_id = ? AND livemode = ?`, id, o.MerchantID, o.Livemode))
	if store.IsNotFound(err) {
		return d, errs.NotFound("webhook_delivery", id)
	}
	if err != nil {
		return d, err
	}
	ds := []Delivery{d}
	err = loadAttempts(ctx, s.db, ds)
	return ds[0], err
}

// Redeliver sends an event again: one new delivery to each enabled endpoint
// subscribed to its type (or only to endpointID when given), each with its
// own attempts and retries. It answers the new deliveries. Caps refuse it
// with 429 and change nothing (see checkRedeliveryCaps). It writes in the
// unit of work of the request cl claims (store.NoClaim: on its own).
func (s *Service) Redeliver(ctx context.Context, cl store.Claim, o Owner, eventID, endpointID string) ([]Delivery, error) {
	var out []Delivery
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		out = out[:0]
		ev, err := events.Get(ctx, tx, o.MerchantID, o.Livemode, eventID)
		if store.IsNotFound(err) {
			return errs.NotFound("event", eventID)
		}
		if err != nil {
			return err
		}
		var targets []Endpoint
		if endpointID != "" {
			ep, err := getEndpoint(ctx, tx, o, endpointID)
			if err != nil {
				if errs.IsCode(err, "resource_missing") {
					return errs.Invalid("endpoint_id", "resource_missing", "no such webhook_endpoint: '%s'", endpointID)
				}
				return err
			}
			if ep.Status != EndpointEnabled {
				return errs.InvalidState("webhook endpoint %s is disabled; enable it before redelivering to it", endpointID)
			}
			targets = []Endpoint{ep}
		} else {
			eps, err := subscribers(ctx, tx, o.MerchantID, o.Livemode)
			if err != nil {
				return err
			}
			for _, ep := range eps {
				if ep.Status == EndpointEnabled && subscribed(ep.EnabledEvents, ev.Type) {
					targets = append(targets, ep)
				}
			}
		}
		if err := s.checkRedeliveryCaps(ctx, tx, o, ev.ID, targets); err != nil {
			return err
		}
		failFirst := false
		if !ev.Livemode {
			if failFirst, err = events.WebhookFailMarked(ctx, tx, ev.ObjectID); err != nil {
				return err
			}
		}
		rows := make([]newDelivery, len(targets))
		for i, ep := range targets {
			rows[i] = newDelivery{ev: &ev, endpointID: ep.ID, failFirst: failFirst}
		}
		out, err = insertDeliveries(ctx, tx, rows, true)
		return err
	})
	if err != nil {
		if e := errs.As(err); e != nil && e.Kind == errs.KindRateLimited {
			s.metrics.refused.WithLabelValues(e.Code).Inc()
		}
		return nil, err
	}
	if len(out) > 0 {
		s.wakeDelivery()
	}
	return out, nil
}

// webhookFailMarked returns which of objectIDs are under the sandbox
// scenario sandbox_webhook_fail (the foundation's marker table, read in bulk;
// events.WebhookFailMarked reads one).
func webhookFailMarked(ctx context.Context, q store.Querier, objectIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	for len(objectIDs) > 0 {
		chunk := objectIDs[:min(len(objectIDs), 500)]
		objectIDs = objectIDs[len(chunk):]
		ph, in := store.PaddedIn(chunk)
		rows, err := q.Query(ctx, "SELECT object_id FROM sandbox_webhook_fail WHERE object_id IN ("+ph+")", in...)
		if err != nil {
			return nil, err
		}
		if err := store.AddIDs(rows, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// newDelivery is a delivery to make.
type newDelivery struct {
	ev         *events.Event
	endpointID string
	failFirst  bool
	recovery   bool // made by recover (left out of the redelivery caps)
}

// insertDeliveries makes pending deliveries due now, many rows per statement.
func insertDeliveries(ctx context.Context, tx *store.Tx, rows []newDelivery, redelivery bool) ([]Delivery, error) {
	now := tx.Now()
	out := make([]Delivery, 0, len(rows))
	const perStatement = 100
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), perStatement)]
		rows = rows[len(chunk):]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO webhook_deliveries (id, merchant_id, livemode, event_id, endpoint_id, status, attempt_count,
			next_attempt_at, fail_first, redelivery, recovery, created_at, updated_at) VALUES `)
		args := make([]any, 0, len(chunk)*11)
		for i, r := range chunk {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?)")
			d := Delivery{ID: ids.New("whdel_"), Object: "webhook_delivery", EventID: r.ev.ID, EndpointID: r.endpointID,
				Status: DeliveryPending, Attempts: []Attempt{}, NextAttemptAt: &Time{now}}
			args = append(args, d.ID, r.ev.MerchantID, r.ev.Livemode, r.ev.ID, r.endpointID, store.Micros(now), r.failFirst, redelivery, r.recovery,
				store.Micros(now), store.Micros(now))
			out = append(out, d)
		}
		if _, err := tx.Exec(ctx, sb.String(), args...); err != nil {
			return nil, err
		}
	}
	return out, nil
}
