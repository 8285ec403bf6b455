package retention

import (
	"context"
	"strings"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// Horizons deletes what a Policy no longer keeps, in batches of Batch rows,
// each batch its own short transaction, so that a run's cost follows what it
// removes and no batch holds SQLite's writer or PostgreSQL's row locks for
// long.
//
// Every batch finds its rows through an index in the order of that index:
// events and deliveries through their primary keys (payd's ids sort by
// creation time, so "made before the horizon" is a range of ids, and neither
// table pays for an index of its own on created_at that every insert would
// maintain for this job alone), request logs and idempotency keys through
// their created_at indexes. Events and deliveries are scanned from where the
// last batch stopped, so the few rows a run keeps below the horizon (an event
// whose delivery is still pending) are read once per run, not once per batch.
//
// On PostgreSQL the rows of a batch are claimed with FOR UPDATE SKIP LOCKED:
// two runs at once (two processes, or a run whose job lease lapsed) take
// disjoint batches, and neither waits for the other except where an event's
// purge takes its deliveries, which it locks before touching their attempts,
// in the order a delivery's purge does, so the two never wait on each other
// in a cycle.
type Horizons struct {
	DB     *store.DB
	Policy Policy
	// Batch is the rows per transaction (DefaultBatch when zero).
	Batch int
	// MaxBatches bounds one run's batches per kind (DefaultMaxBatches when
	// zero); what is left waits for the next run.
	MaxBatches int
}

// Defaults of a Horizons.
const (
	DefaultBatch      = 500
	DefaultMaxBatches = 1000
)

// Removed counts what one run of Horizons deleted.
type Removed struct {
	Events          int64 `json:"events"`
	Deliveries      int64 `json:"deliveries"`
	Attempts        int64 `json:"attempts"`
	RequestLogs     int64 `json:"request_logs"`
	IdempotencyKeys int64 `json:"idempotency_keys"`
}

func (r *Removed) add(o Removed) {
	r.Events += o.Events
	r.Deliveries += o.Deliveries
	r.Attempts += o.Attempts
	r.RequestLogs += o.RequestLogs
	r.IdempotencyKeys += o.IdempotencyKeys
}

// Run deletes, as of the database's clock: finished deliveries past their
// horizon, events past theirs that nothing needs any more (with their
// finished deliveries), request logs and idempotency keys past theirs.
func (h *Horizons) Run(ctx context.Context) (Removed, error) {
	var r Removed
	now := h.DB.Now()
	if d := h.Policy.Deliveries; d > 0 {
		if err := h.deliveries(ctx, now.Add(-d), &r); err != nil {
			return r, err
		}
	}
	if d := h.Policy.Events; d > 0 {
		if err := h.events(ctx, now.Add(-d), &r); err != nil {
			return r, err
		}
	}
	if d := h.Policy.RequestLogs; d > 0 {
		cutoff := store.Micros(now.Add(-d))
		n, err := h.repeat(ctx, func(tx *store.Tx, limit int) (int64, error) {
			got, err := store.Strings(ctx, tx, `SELECT id FROM request_logs WHERE created_at < ?
				ORDER BY created_at LIMIT ?`+tx.Dialect().ForUpdateSkipLocked(), cutoff, limit)
			if err != nil {
				return 0, err
			}
			return deleteIn(ctx, tx, "DELETE FROM request_logs WHERE id IN (%s)", got)
		})
		r.RequestLogs = n
		if err != nil {
			return r, err
		}
	}
	n, err := h.repeat(ctx, func(tx *store.Tx, limit int) (int64, error) {
		return h.keys(ctx, tx, now, limit)
	})
	r.IdempotencyKeys = n
	return r, err
}

// keys deletes one batch of idempotency keys past the horizon. A key goes
// once both its claim and its answer are older than the horizon:
// locked_until is when the answer was stored (a request's last lease, for
// one that called a provider) or when an unfinished claim lapsed, so a key
// still held, or answered late, stays its full time.
func (h *Horizons) keys(ctx context.Context, tx *store.Tx, now time.Time, limit int) (int64, error) {
	cutoff := store.Micros(now.Add(-max(h.Policy.IdempotencyKeys, MinIdempotencyKeys)))
	rows, err := tx.Query(ctx, `SELECT merchant_id, livemode, principal_id, idem_key FROM idempotency_keys
		WHERE created_at < ? AND locked_until < ? ORDER BY created_at LIMIT ?`+tx.Dialect().ForUpdateSkipLocked(), cutoff, cutoff, limit)
	if err != nil {
		return 0, err
	}
	var found [][4]any
	for rows.Next() {
		var merchant, principal, key string
		var live bool
		if err := rows.Scan(&merchant, &live, &principal, &key); err != nil {
			rows.Close()
			return 0, err
		}
		found = append(found, [4]any{merchant, live, principal, key})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	// Deleted by their primary key, a hundred keys a statement.
	var total int64
	for start := 0; start < len(found); start += 100 {
		chunk := found[start:min(start+100, len(found))]
		args := make([]any, 0, 4*len(chunk))
		for _, k := range chunk {
			args = append(args, k[:]...)
		}
		row := "(?, CAST(? AS BOOLEAN), ?, ?)"
		res, err := tx.Exec(ctx, "DELETE FROM idempotency_keys WHERE (merchant_id, livemode, principal_id, idem_key) IN (VALUES "+
			strings.TrimSuffix(strings.Repeat(row+", ", len(chunk)), ", ")+")", args...)
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}

func (h *Horizons) batch() int {
	if h.Batch > 0 {
		return h.Batch
	}
	return DefaultBatch
}

func (h *Horizons) maxBatches() int {
	if h.MaxBatches > 0 {
		return h.MaxBatches
	}
	return DefaultMaxBatches
}

// repeat runs del (one batch of at most limit rows, in its own transaction)
// until a batch removes fewer than limit rows or the run's batches are
// spent, and returns the rows removed.
func (h *Horizons) repeat(ctx context.Context, del func(tx *store.Tx, limit int) (int64, error)) (int64, error) {
	var total int64
	for i := 0; i < h.maxBatches(); i++ {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		var n int64
		err := h.DB.InTx(ctx, func(tx *store.Tx) error {
			var err error
			n, err = del(tx, h.batch())
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < int64(h.batch()) {
			break
		}
	}
	return total, nil
}

// scan runs batch over the ids below ceiling from the start of the table's
// primary key, each batch starting after the last id the previous one
// returned, until a batch returns fewer than the batch size or the run's
// batches are spent.
func (h *Horizons) scan(ctx context.Context, r *Removed, batch func(tx *store.Tx, after string, limit int, r *Removed) ([]string, error)) error {
	after := ""
	for i := 0; i < h.maxBatches(); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var got []string
		var delta Removed // counted once the batch commits (InTx may run it again)
		err := h.DB.InTx(ctx, func(tx *store.Tx) error {
			var err error
			delta = Removed{}
			got, err = batch(tx, after, h.batch(), &delta)
			return err
		})
		if err != nil {
			return err
		}
		r.add(delta)
		if len(got) > 0 {
			after = got[len(got)-1]
		}
		if len(got) < h.batch() {
			return nil
		}
	}
	return nil
}

// deliveries deletes finished deliveries made before cutoff, and their
// attempts.
func (h *Horizons) deliveries(ctx context.Context, cutoff time.Time, r *Removed) error {
	ceiling := ids.Floor("whdel_", cutoff)
	return h.scan(ctx, r, func(tx *store.Tx, after string, limit int, r *Removed) ([]string, error) {
		got, err := store.Strings(ctx, tx, `SELECT id FROM webhook_deliveries WHERE id > ? AND id < ? AND created_at < ?
			AND status <> 'pending' ORDER BY id LIMIT ?`+tx.Dialect().ForUpdateSkipLocked(),
			after, ceiling, store.Micros(cutoff), limit)
		if err != nil || len(got) == 0 {
			return got, err
		}
		a, d, err := deleteDeliveries(ctx, tx, got)
		r.Attempts += a
		r.Deliveries += d
		return got, err
	})
}

// events deletes events made before cutoff that have been dispatched and
// have no pending delivery, with their (finished) deliveries and attempts.
func (h *Horizons) events(ctx context.Context, cutoff time.Time, r *Removed) error {
	ceiling := ids.Floor("evt_", cutoff)
	return h.scan(ctx, r, func(tx *store.Tx, after string, limit int, r *Removed) ([]string, error) {
		got, err := store.Strings(ctx, tx, `SELECT id FROM events WHERE id > ? AND id < ? AND created_at < ?
			AND dispatched_at IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND d.status = 'pending')
			ORDER BY id LIMIT ?`+tx.Dialect().ForUpdateSkipLocked(),
			after, ceiling, store.Micros(cutoff), limit)
		if err != nil || len(got) == 0 {
			return got, err
		}
		// The events' deliveries are locked first (waiting for a
		// delivery purge that holds one), as a delivery's purge does,
		// before their attempts are touched.
		var dels []string
		for start := 0; start < len(got); start += inChunk {
			ph, args := store.PaddedIn(got[start:min(start+inChunk, len(got))])
			more, err := store.Strings(ctx, tx, `SELECT id FROM webhook_deliveries WHERE event_id IN (`+ph+`)
				AND status <> 'pending' ORDER BY id`+tx.Dialect().ForUpdate(), args...)
			if err != nil {
				return got, err
			}
			dels = append(dels, more...)
		}
		a, d, err := deleteDeliveries(ctx, tx, dels)
		r.Attempts += a
		r.Deliveries += d
		if err != nil {
			return got, err
		}
		n, err := deleteIn(ctx, tx, "DELETE FROM events WHERE id IN (%s)", got)
		r.Events += n
		return got, err
	})
}

// inChunk bounds the values of one IN list.
const inChunk = 500

// deleteDeliveries deletes the attempts of the deliveries ids, then the
// deliveries, and returns how many of each went.
func deleteDeliveries(ctx context.Context, tx *store.Tx, delivery []string) (attempts, deliveries int64, err error) {
	if attempts, err = deleteIn(ctx, tx, "DELETE FROM webhook_attempts WHERE delivery_id IN (%s)", delivery); err != nil {
		return attempts, 0, err
	}
	deliveries, err = deleteIn(ctx, tx, "DELETE FROM webhook_deliveries WHERE id IN (%s) AND status <> 'pending'", delivery)
	return attempts, deliveries, err
}

// deleteIn runs a DELETE whose %s is an IN list, over values in chunks, and
// returns the rows it removed.
func deleteIn(ctx context.Context, tx *store.Tx, q string, values []string) (int64, error) {
	var total int64
	for start := 0; start < len(values); start += inChunk {
		ph, args := store.PaddedIn(values[start:min(start+inChunk, len(values))])
		res, err := tx.Exec(ctx, strings.Replace(q, "%s", ph, 1), args...)
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}
