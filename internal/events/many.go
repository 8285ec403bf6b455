package events

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/timestamp"
	"github.com/payd/payd/internal/tracing"
)

// Pending is one event to record with EmitMany.
type Pending struct {
	MerchantID string
	Livemode   bool
	Type       string
	ObjectType string
	ObjectID   string
	Object     any // marshalled to JSON by EmitMany
	// OnClock is the test clock's time the event happened at, for an event
	// a test clock's advance makes (nil otherwise): it is the event's
	// created_at as shown, stored beside the real time (clock_created_at),
	// which retention and every time filter keep using.
	OnClock *time.Time
}

// emitChunk bounds the rows of one multi-row INSERT.
const emitChunk = 500

// EmitMany records many events in tx with multi-row inserts, for changes
// that touch thousands of objects in one transaction (the rows of a payout
// batch). Each event is exactly what Emit would record; ids are taken in
// order, so the events of one call sort in the order given.
func EmitMany(ctx context.Context, tx *store.Tx, pending []Pending) ([]Event, error) {
	if len(pending) == 0 {
		return nil, nil
	}
	out := make([]Event, len(pending))
	for i, p := range pending {
		data, err := json.Marshal(timestamp.Seconds(p.Object))
		if err != nil {
			return nil, fmt.Errorf("marshal %s for event %s: %w", p.ObjectType, p.Type, err)
		}
		out[i] = Event{ID: ids.New("evt_"), MerchantID: p.MerchantID, Livemode: p.Livemode, Type: p.Type,
			ObjectType: p.ObjectType, ObjectID: p.ObjectID, Data: data, CreatedAt: tx.Now(), RecordedAt: tx.Now()}
		if p.OnClock != nil {
			out[i].CreatedAt = p.OnClock.UTC()
		}
	}
	now := store.Micros(tx.Now())
	tp := tracing.Traceparent(ctx) // the same request emits them all
	onClock := slices.ContainsFunc(pending, func(p Pending) bool { return p.OnClock != nil })
	cols, n := "", 8
	if tp != "" {
		cols, n = cols+", trace_context", n+1
	}
	if onClock {
		cols, n = cols+", clock_created_at", n+1
	}
	for start := 0; start < len(out); start += emitChunk {
		end := min(start+emitChunk, len(out))
		q := "INSERT INTO events (id, merchant_id, livemode, type, object_type, object_id, data, created_at" + cols + ") VALUES " + store.Rows(end-start, n)
		args := make([]any, 0, (end-start)*n)
		for i := range out[start:end] {
			e := &out[start+i]
			e.TraceParent = tp
			args = append(args, e.ID, e.MerchantID, e.Livemode, e.Type, e.ObjectType, e.ObjectID, string(e.Data), now)
			if tp != "" {
				args = append(args, tp)
			}
			if onClock {
				args = append(args, store.MicrosPtr(pending[start+i].OnClock))
			}
		}
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return nil, err
		}
	}
	if n := notifier; n != nil {
		tx.AfterCommit(n.Notify)
	}
	return out, nil
}
