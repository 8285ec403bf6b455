package webhooks

import (
	"context"
	"time"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/store"
)

// dispatchBatch is how many undispatched events one dispatch transaction takes.
const dispatchBatch = 200

// dispatchGap is the least time between the starts of two dispatch
// transactions. A quiet system dispatches an event as soon as it commits;
// under load the commits that land within one gap are dispatched together,
// so the cost of dispatching (a few statements per transaction) is shared
// by many events instead of paid by each.
//
// The gap adapts to the batches it yields: while dispatches take fewer than
// dispatchTarget events the gap doubles, up to dispatchMaxGap, and while they
// take at least that many it halves again, down to dispatchGap. That matters
// most with several processes on one database: each process's dispatcher is
// woken by its own commits, and at a fixed gap N processes ran N times as
// many dispatch transactions for the same events, each taking a third or a
// half of the events it would have taken alone. A dispatch that comes after
// a quiet spell longer than the gap still runs at once, so an event on an idle
// system is dispatched as soon as it commits, and under load an event waits
// at most dispatchMaxGap (plus the poll for events of a process that runs no
// workers).
const (
	dispatchGap    = 5 * time.Millisecond
	dispatchMaxGap = 40 * time.Millisecond
	dispatchTarget = 16
)

// nextDispatchGap is the gap after a dispatch that took n events.
func nextDispatchGap(gap time.Duration, n int) time.Duration {
	if n >= dispatchTarget {
		return max(gap/2, dispatchGap)
	}
	return min(gap*2, dispatchMaxGap)
}

// runDispatcher turns committed events into deliveries: woken after every
// commit that emitted events in this process, and every poll interval for
// events committed by other processes.
func (s *Service) runDispatcher(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	var last time.Time
	gap := dispatchGap
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wakeDispatch:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
			if wait := gap - time.Since(last); wait > 0 {
				t.Reset(wait)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}
		for ctx.Err() == nil {
			last = time.Now()
			n, made, err := s.Dispatch(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("dispatch webhook events", "err", err)
				}
				break
			}
			gap = nextDispatchGap(gap, n)
			if made > 0 {
				s.wakeDelivery()
			}
			if n < dispatchBatch {
				break
			}
		}
		t.Reset(s.poll)
	}
}

// Dispatch takes up to dispatchBatch undispatched events and, in one
// transaction, creates one delivery per (event, enabled endpoint of the
// event's merchant and mode subscribed to its type) and marks the events
// dispatched. Either all of that commits or none of it, so an event is
// neither lost nor given two deliveries to one endpoint. On PostgreSQL the
// events are locked with SKIP LOCKED, so dispatchers in several processes take
// disjoint batches. It returns how many events it dispatched and how many
// deliveries it made of them.
func (s *Service) Dispatch(ctx context.Context) (dispatched, deliveries int, err error) {
	var n int
	var made int
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		n, made = 0, 0
		// Only what routing an event needs: its payload (the largest
		// column) is read when a delivery is sent, and most events of a
		// busy merchant go to no endpoint at all.
		rows, err := tx.Query(ctx, `SELECT id, merchant_id, livemode, type, object_id FROM events WHERE dispatched_at IS NULL
			ORDER BY created_at, id LIMIT ?`+tx.Dialect().ForUpdateSkipLocked(), dispatchBatch)
		if err != nil {
			return err
		}
		var batch []events.Event
		for rows.Next() {
			var ev events.Event
			if err := rows.Scan(&ev.ID, &ev.MerchantID, &ev.Livemode, &ev.Type, &ev.ObjectID); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, ev)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		type owner struct {
			merchant string
			live     bool
		}
		endpoints := map[owner][]Endpoint{}
		type pair struct {
			ev *events.Event
			ep string
		}
		var pairs []pair
		var testObjects []string
		room := map[string]int{} // deliveries a paused endpoint may still queue
		ids := make([]string, 0, len(batch))
		for i := range batch {
			ev := &batch[i]
			key := owner{ev.MerchantID, ev.Livemode}
			eps, ok := endpoints[key]
			if !ok {
				if eps, err = subscribers(ctx, tx, ev.MerchantID, ev.Livemode); err != nil {
					return err
				}
				endpoints[key] = eps
			}
			sub := false
			for _, ep := range eps {
				if !subscribed(ep.EnabledEvents, ev.Type) {
					continue
				}
				if ep.Paused() {
					// An endpoint payd disabled keeps what happens for
					// when it is enabled again, up to its queue's cap.
					left, ok := room[ep.ID]
					if !ok {
						n, err := countPending(ctx, tx, ep.ID)
						if err != nil {
							return err
						}
						left = MaxPendingPerEndpoint - n
					}
					if left <= 0 {
						room[ep.ID] = 0
						continue
					}
					room[ep.ID] = left - 1
				}
				pairs = append(pairs, pair{ev, ep.ID})
				sub = true
			}
			if sub && !ev.Livemode {
				testObjects = append(testObjects, ev.ObjectID)
			}
			ids = append(ids, ev.ID)
		}
		marked, err := webhookFailMarked(ctx, tx, testObjects)
		if err != nil {
			return err
		}
		todo := make([]newDelivery, len(pairs))
		for i, p := range pairs {
			todo[i] = newDelivery{ev: p.ev, endpointID: p.ep, failFirst: !p.ev.Livemode && marked[p.ev.ObjectID]}
		}
		if _, err := insertDeliveries(ctx, tx, todo, false); err != nil {
			return err
		}
		made = len(todo)
		ph, in := store.PaddedIn(ids)
		res, err := tx.Exec(ctx, "UPDATE events SET dispatched_at = ? WHERE dispatched_at IS NULL AND id IN ("+ph+")",
			append([]any{store.Micros(tx.Now())}, in...)...)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); int(k) != len(batch) {
			// Another dispatcher got some of them first (possible only if
			// the lock was not taken): undo, so no delivery is doubled.
			return errRaced
		}
		n = len(batch)
		return nil
	})
	if err == errRaced {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	s.metrics.dispatched.Add(float64(n))
	s.metrics.created.Add(float64(made))
	return n, made, nil
}

type racedError struct{}

func (racedError) Error() string { return "events dispatched concurrently" }

var errRaced error = racedError{}
