package main

import (
	"context"
	"fmt"
	"time"

	"github.com/payd/payd/internal/retention"
	"github.com/payd/payd/internal/store"
)

// shape is how much of each payment's history the seed keeps.
//
// "retained" is what a database that has run payd under its default
// retention policy (retention.DefaultPolicy) holds at the history's end:
// every payment's intent, ledger transaction, entries and balance effect
// (payd never deletes those), but events only for the payments inside the
// events' horizon before the history's end, webhook deliveries and their
// attempts only inside the deliveries' horizon, and idempotency keys only
// inside the keys' horizon. "whole" keeps all of it for every payment: the
// worst case for size and for the queries.
//
// A horizon is counted in rows of history (one row every step), newest
// first: a payment's events are kept when it is among the last
// events-horizon ÷ step rows before the history's end. Both events of a
// payment (0.5 s apart) go or stay together, so the counts stay whole.
type shape struct {
	name string
	// Rows of history, newest first, whose events / deliveries (with their
	// attempts) / idempotency keys are kept; 0 keeps every row's.
	events, deliveries, keys int
}

// shapeOf is the named shape under policy p.
func shapeOf(name string, p retention.Policy) (shape, error) {
	rows := func(h time.Duration) int {
		if h <= 0 {
			return 0 // forever
		}
		return max(int(h/step), 1)
	}
	switch name {
	case "retained":
		return shape{name: name, events: rows(p.Events), deliveries: rows(p.Deliveries), keys: rows(p.IdempotencyKeys)}, nil
	case "whole":
		return shape{name: name}, nil
	}
	return shape{}, fmt.Errorf("-history: %q is neither retained nor whole", name)
}

// kept is how many of n rows of history keep what a window of w rows
// (0: all) keeps.
func kept(w, n int) int {
	if w == 0 || w >= n {
		return n
	}
	return w
}

// String describes the shape for the report.
func (sh shape) String() string {
	if sh.name == "whole" {
		return "history whole (every event, delivery, attempt and idempotency key kept)"
	}
	win := func(w int) string {
		if w == 0 {
			return "all"
		}
		return fmt.Sprintf("the last %d payments (%s)", w, time.Duration(w)*step)
	}
	return fmt.Sprintf("history retained as payd's default retention keeps it: events of %s, deliveries and attempts of %s, idempotency keys of %s",
		win(sh.events), win(sh.deliveries), win(sh.keys))
}

// retainedGroup is a set of tables that the retention policy trims to one
// window of rows of history.
type retainedGroup struct {
	tables []string
	window func(shape) int
}

// retainedGroups are the seeded tables the retention job trims, by window;
// every other table only grows with the history.
var retainedGroups = []retainedGroup{
	{[]string{"events"}, func(sh shape) int { return sh.events }},
	{[]string{"webhook_deliveries", "webhook_attempts"}, func(sh shape) int { return sh.deliveries }},
	{[]string{"idempotency_keys"}, func(sh shape) int { return sh.keys }},
}

// tableBytes is the bytes on disk of each table with its indexes (and
// TOAST): on PostgreSQL pg_total_relation_size in payd's schema, on SQLite
// the pages of the table's and its indexes' B-trees (dbstat).
func tableBytes(ctx context.Context, db *store.DB, table string) (int64, error) {
	var n int64
	q := db.Engine().TableSizeQuery()
	err := db.QueryRow(ctx, q, table).Scan(&n)
	return n, err
}

// projection is the disk a size is expected to take, from one size's
// bytes: the bytes per payment of the tables that only grow, times the
// payments, plus each retained group's bytes per kept row of history
// times the rows it keeps at that size (which stop growing past the
// window).
type projection struct {
	perPayment float64   // bytes per payment of every table but the retained groups'
	perRow     []float64 // per retainedGroups entry: bytes per kept row of history
}

// diskParts measures the database at size n (rows of history) as a
// projection, and returns the retained groups' bytes in all.
func diskParts(ctx context.Context, db *store.DB, sh shape, total, payments int64, n int) (projection, int64, error) {
	p := projection{perRow: make([]float64, len(retainedGroups))}
	var retained int64
	for g, rg := range retainedGroups {
		var b int64
		for _, t := range rg.tables {
			tb, err := tableBytes(ctx, db, t)
			if err != nil {
				return p, 0, fmt.Errorf("%s's bytes: %w", t, err)
			}
			b += tb
		}
		retained += b
		if k := kept(rg.window(sh), n); k > 0 {
			p.perRow[g] = float64(b) / float64(k)
		}
	}
	if payments > 0 {
		p.perPayment = float64(total-retained) / float64(payments)
	}
	return p, retained, nil
}

// bytes is the projected size at n rows of history.
func (p projection) bytes(sh shape, n int) float64 {
	b := p.perPayment * float64(n)
	for g, rg := range retainedGroups {
		b += p.perRow[g] * float64(kept(rg.window(sh), n))
	}
	return b
}

// purgeRetained deletes, before the history grows to n rows, the rows of
// the retained groups that fall out of their windows at n, as the
// retention job would have by then: children first (attempts, deliveries,
// events). Only seeded rows are older than the window's start; the bench's
// own are newer than the whole history. On PostgreSQL the trimmed tables
// are then rewritten (VACUUM FULL), so their size is that of the rows kept
// rather than of a table a one-off purge emptied. It reports whether it
// deleted anything.
func (s *seeder) purgeRetained(ctx context.Context, n int) (bool, error) {
	if s.shape.name != "retained" || s.done == 0 {
		return false, nil
	}
	var trimmed []string
	for g := len(retainedGroups) - 1; g >= 0; g-- {
		rg := retainedGroups[g]
		w := rg.window(s.shape)
		if w == 0 || n-w <= s.done-kept(w, s.done) {
			continue // nothing seeded falls out of the window
		}
		before := store.Micros(s.rowAt(n - w))
		for i := len(rg.tables) - 1; i >= 0; i-- {
			t := rg.tables[i]
			if _, err := s.db.Exec(ctx, "DELETE FROM "+t+" WHERE created_at < ?", before); err != nil {
				return false, fmt.Errorf("trimming %s: %w", t, err)
			}
			trimmed = append(trimmed, t)
		}
	}
	if err := s.db.VacuumFull(ctx, trimmed...); err != nil {
		return false, err
	}
	return len(trimmed) > 0, nil
}
