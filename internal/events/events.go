// Package events is the transactional outbox: a capability records an event
// with Emit in the same database transaction as the state change it reports,
// so an event exists if and only if the change committed. Delivery (webhooks,
// `payd listen`) reads the table afterwards.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/timestamp"
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
		ObjectType: objectType, ObjectID: objectID, Data: data, CreatedAt: tx.Now()}
	// The id is fresh: the insert fails only when the transaction does, so
	// it goes to the database with the transaction's next statement.
	if err := tx.ExecLater(ctx, `INSERT INTO events (id, merchant_id, livemode, type, object_type, object_id, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ev.ID, merchantID, livemode, typ, objectType, objectID, string(data), store.Micros(ev.CreatedAt)); err != nil {
		return Event{}, err
	}
	if n := notifier; n != nil {
		tx.AfterCommit(n.Notify)
	}
	return ev, nil
}

// Columns is the column list Scan expects.
const Columns = "id, merchant_id, livemode, type, object_type, object_id, data, created_at"

// Scan reads one event row selected with Columns.
func Scan(row interface{ Scan(...any) error }) (Event, error) {
	var e Event
	var data string
	var created int64
	if err := row.Scan(&e.ID, &e.MerchantID, &e.Livemode, &e.Type, &e.ObjectType, &e.ObjectID, &data, &created); err != nil {
		return e, err
	}
	e.Data = json.RawMessage(data)
	e.CreatedAt = store.FromMicros(created)
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
