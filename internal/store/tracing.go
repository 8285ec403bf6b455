package store

import (
	"context"
	"database/sql/driver"

	"github.com/jackc/pgx/v5"

	"github.com/payd/payd/internal/tracing"
)

// Database spans (internal/tracing): every round trip to PostgreSQL (a
// statement, or a pipelined batch with its statement count) and every
// statement on SQLite is counted into its request's one database span, or,
// under another span (a job's), is a child span of its own. Only the statement's first keyword is recorded, never its text or
// its bound values. While tracing is off these hooks cost one atomic load.

// tracedRoundTrips adds spans to the round trips roundTrips counts.
type tracedRoundTrips struct{ roundTrips }

func (t tracedRoundTrips) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	ctx = t.roundTrips.TraceQueryStart(ctx, c, d)
	if tracing.On() {
		ctx = tracing.StartDB(ctx, "postgresql", d.SQL, 1)
	}
	return ctx
}

func (tracedRoundTrips) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	tracing.EndDB(ctx, d.Err)
}

func (t tracedRoundTrips) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	ctx = t.roundTrips.TraceBatchStart(ctx, c, d)
	if tracing.On() && d.Batch != nil && len(d.Batch.QueuedQueries) > 0 {
		ctx = tracing.StartDB(ctx, "postgresql", firstWork(d.Batch.QueuedQueries), d.Batch.Len())
	}
	return ctx
}

func (tracedRoundTrips) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchEndData) {
	tracing.EndDB(ctx, d.Err)
}

// firstWork is the first statement of a batch that is not its BEGIN, which
// names the batch's operation.
func firstWork(qs []*pgx.QueuedQuery) string {
	for _, q := range qs {
		if tracing.Operation(q.SQL) != "BEGIN" {
			return q.SQL
		}
	}
	return qs[0].SQL
}

func (c *cachingConn) execTraced(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ctx = tracing.StartDB(ctx, "sqlite", query, 1)
	r, err := c.exec(ctx, query, args)
	tracing.EndDB(ctx, err)
	return r, err
}

// queryTraced's span covers the statement's first step (what SQLite does
// before the first row), not the reading of its rows.
func (c *cachingConn) queryTraced(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	ctx = tracing.StartDB(ctx, "sqlite", query, 1)
	r, err := c.query(ctx, query, args)
	tracing.EndDB(ctx, err)
	return r, err
}
