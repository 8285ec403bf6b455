// Package events is the transactional outbox: a capability records an event
// with Emit in the same database transaction as the state change it reports,
// so an event exists if and only if the change committed. Delivery (webhooks,
// `payd listen`) reads the table afterwards.
package events

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/timestamp"
	"github.com/payd/payd/internal/tracing"
)

// Event is one recorded happening, as stored.
type Event struct {
	ID         string          `json:"id"`
	MerchantID string          `json:"-"`
	Livemode   bool            `json:"livemode"`
	Type       string          `json:"type"`
	ObjectType string          `json:"-"`
	ObjectID   string          `json:"-"`
	Data       json.RawMessage `json:"-"` // the object as it was when the event happened
	CreatedAt  time.Time       `json:"created_at"`
	// RecordedAt is the real time the event was written: CreatedAt unless a
	// test clock's advance made it. Time windows over events (retention,
	// a stream's sweep) go by it.
	RecordedAt time.Time `json:"-"`
	// TraceParent is the W3C traceparent of the request that emitted the
	// event, kept while tracing is on (and the request sampled) so that the
	// spans of its webhook deliveries link to it; "" otherwise. Read only
	// by ScanTraced.
	TraceParent string `json:"-"`
}

// Envelope is the JSON form of an event that receivers get: both consumer
// forms work, data.id and data.object.
type Envelope struct {
	ID        string       `json:"id"`
	Object    string       `json:"object"`
	Type      string       `json:"type"`
	CreatedAt string       `json:"created_at"`
	Livemode  bool         `json:"livemode"`
	Data      EnvelopeData `json:"data"`
}

// EnvelopeData holds the object and its id.
type EnvelopeData struct {
	ID     string          `json:"id"`
	Object json.RawMessage `json:"object"`
}

// Envelope renders the event for delivery.
func (e Event) Envelope() Envelope {
	return Envelope{ID: e.ID, Object: "event", Type: e.Type, CreatedAt: timestamp.Format(e.CreatedAt),
		Livemode: e.Livemode, Data: EnvelopeData{ID: e.ObjectID, Object: e.Data}}
}

// Notifier is woken after a transaction that emitted events commits.
type Notifier interface{ Notify() }

var notifier Notifier

// SetNotifier installs the process's delivery worker wake-up (optional).
func SetNotifier(n Notifier) { notifier = n }

// Emit records an event about object (marshalled to JSON now) in tx.
func Emit(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, typ, objectType, objectID string, object any) (Event, error) {
	data, err := json.Marshal(timestamp.Seconds(object))
	if err != nil {
		return Event{}, fmt.Errorf("marshal %s for event %s: %w", objectType, typ, err)
	}
	ev := Event{ID: ids.New("evt_"), MerchantID: merchantID, Livemode: livemode, Type: typ,
		ObjectType: objectType, ObjectID: objectID, Data: data, CreatedAt: tx.Now(), RecordedAt: tx.Now(), TraceParent: tracing.Traceparent(ctx)}
	// The id is fresh: the insert fails only when the transaction does, so
	// it goes to the database with the transaction's next statement.
	if ev.TraceParent == "" {
		err = tx.ExecLater(ctx, `INSERT INTO events (id, merchant_id, livemode, type, object_type, object_id, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ev.ID, merchantID, livemode, typ, objectType, objectID, string(data), store.Micros(ev.CreatedAt))
	} else {
		err = tx.ExecLater(ctx, `INSERT INTO events (id, merchant_id, livemode, type, object_type, object_id, data, created_at, trace_context)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, ev.ID, merchantID, livemode, typ, objectType, objectID, string(data), store.Micros(ev.CreatedAt), ev.TraceParent)
	}
	if err != nil {
		return Event{}, err
	}
	if n := notifier; n != nil {
		tx.AfterCommit(n.Notify)
	}
	return ev, nil
}

// Columns is the column list Scan expects.
const Columns = "id, merchant_id, livemode, type, object_type, object_id, data, created_at, clock_created_at"

// createdAt is an event's created_at as shown: the test clock's time when a
// clock's advance made it (clock_created_at), else the real time.
func createdAt(created int64, onClock sql.NullInt64) time.Time {
	if onClock.Valid {
		return store.FromMicros(onClock.Int64)
	}
	return store.FromMicros(created)
}

// Scan reads one event row selected with Columns.
func Scan(row interface{ Scan(...any) error }) (Event, error) {
	var e Event
	var data string
	var created int64
	var onClock sql.NullInt64
	if err := row.Scan(&e.ID, &e.MerchantID, &e.Livemode, &e.Type, &e.ObjectType, &e.ObjectID, &data, &created, &onClock); err != nil {
		return e, err
	}
	e.Data = json.RawMessage(data)
	e.CreatedAt, e.RecordedAt = createdAt(created, onClock), store.FromMicros(created)
	return e, nil
}

// TracedColumns is the column list ScanTraced expects.
const TracedColumns = Columns + ", trace_context"

// ScanTraced reads one event row selected with TracedColumns: Scan's, and
// the traceparent of the request that emitted it.
func ScanTraced(row interface{ Scan(...any) error }) (Event, error) {
	var e Event
	var data string
	var created int64
	var tp *string
	var onClock sql.NullInt64
	if err := row.Scan(&e.ID, &e.MerchantID, &e.Livemode, &e.Type, &e.ObjectType, &e.ObjectID, &data, &created, &onClock, &tp); err != nil {
		return e, err
	}
	e.Data = json.RawMessage(data)
	e.CreatedAt, e.RecordedAt = createdAt(created, onClock), store.FromMicros(created)
	if tp != nil {
		e.TraceParent = *tp
	}
	return e, nil
}

// Get returns one event of the merchant in the given mode.
func Get(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string) (Event, error) {
	return Scan(q.QueryRow(ctx, "SELECT "+Columns+" FROM events WHERE id = ? AND merchant_id = ? AND livemode = ?", id, merchantID, livemode))
}

// ForObject returns the events about one object, oldest first.
func ForObject(ctx context.Context, q store.Querier, objectID string) ([]Event, error) {
	rows, err := q.Query(ctx, "SELECT "+Columns+" FROM events WHERE object_id = ? ORDER BY id", objectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e, err := Scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
