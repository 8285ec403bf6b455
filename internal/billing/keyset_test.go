package billing

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestRunScansAreKeysets: a billing run claims due subscriptions and due
// attempts a chunk at a time, and each chunk's scan must start where the
// last one stopped and stop at its limit: an index range that begins after
// the keyset position, in the index's own order (no sort of every due row),
// on a test clock's time line and on the real one (test_clock_id IS NULL).
// A scan from the beginning each chunk walked again every row the run had
// moved (on PostgreSQL, their dead index entries too), so a run's cost grew
// with the square of its size.
func TestRunScansAreKeysets(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		clock := "clock_1"
		pos := keyset{set: true, at: store.Micros(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)), id: "sub_1"}
		for _, tl := range []timeline{{clock: &clock, until: time.Now()}, {until: time.Now()}} {
			for _, c := range []struct {
				what, index, keyset string
				query               func(store.Dialect, timeline, keyset, int) (string, []any)
			}{
				{"due periods", "subscriptions_due_keyset", "current_period_end, id", duePeriodsQuery},
				{"due attempts", "invoices_attempts_keyset", "next_payment_attempt, id", dueAttemptsQuery},
				{"expired claims", "invoices_claims_keyset", "attempt_claimed_until, id", nil},
			} {
				var q string
				var args []any
				if c.query != nil {
					q, args = c.query(db.Dialect(), tl, pos, 250)
				} else {
					q, args = expiredClaimsQuery(db.Dialect(), tl, time.Now(), pos, 250)
				}
				plan := runPlan(t, db, q, args...)
				scan, _, _ := strings.Cut(plan, "SubPlan") // the outer scan (PostgreSQL's subplan follows it)
				scan, _, _ = strings.Cut(scan, "SUBQUERY") // (SQLite's)
				// The keyset is a condition of the index range itself:
				// PostgreSQL's "Index Cond: (... ROW(a, b) > ROW(...))",
				// SQLite's "SEARCH ... USING INDEX x (... (a,b)>(?,?) ...)".
				rowCmp := "ROW(" + c.keyset + ") >"
				sqliteRowCmp := "(" + strings.ReplaceAll(c.keyset, " ", "") + ")>(?,?)"
				if !strings.Contains(scan, c.index) || !strings.Contains(scan, rowCmp) && !strings.Contains(scan, sqliteRowCmp) {
					t.Errorf("%s (clock %v): the scan is not a range of %s starting at the keyset (%s):\n%s", c.what, tl.clock != nil, c.index, rowCmp, plan)
				}
				if strings.Contains(plan, "Sort") || strings.Contains(plan, "TEMP B-TREE") {
					t.Errorf("%s (clock %v): the scan sorts the due rows instead of reading them in the index's order:\n%s", c.what, tl.clock != nil, plan)
				}
			}
		}
	})
}

// runPlan is the plan of q as a billing run's claim transaction plans it
// (store.Tx.PreferIndexOrder), with sequential scans discouraged as
// storetest.QueryPlan does, since the test's tables are empty.
func runPlan(t *testing.T, db *store.DB, q string, args ...any) string {
	t.Helper()
	return storetest.QueryPlanIn(t, db, func(ctx context.Context, tx *store.Tx) error { return tx.PreferIndexOrder(ctx) }, q, args...)
}

// TestSmallChunksManyWorkers: with chunks of three rows and four workers
// sharing each round's keyset position, an advance of three months bills
// every period of every subscription once: no row is passed over for good
// by a keyset that moved past it, and none is taken twice.
func TestSmallChunksManyWorkers(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.svc.ChunkSize = 3
		if db.Engine().ConcurrentWriters() {
			e.svc.Workers = 4
		}
		start := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
		clk := e.clock(start)
		const n = 40
		e.populate(clk.ID, n, 1000)
		e.advance(clk, start)
		e.advance(clk, start.AddDate(0, 3, 0))
		e.checkBilledOnce(n, 4, 1000)
	})
}

// TestBigRoundRefreshesStatistics: a round that opens AnalyzeAfter periods
// or more refreshes PostgreSQL's statistics of invoices before the
// attempts are claimed (with the new open invoices unseen, each claim's
// compare-and-set read every open invoice); a smaller round does not.
// PostgreSQL only: SQLite plans without statistics.
func TestBigRoundRefreshesStatistics(t *testing.T) {
	db := storetest.Open(t, storetest.Postgres)
	old := AnalyzeAfter
	t.Cleanup(func() { AnalyzeAfter = old })
	e := newEnv(t, db)
	start := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	clk := e.clock(start)
	const n = 20
	e.populate(clk.ID, n, 1000)
	e.advance(clk, start)
	analyses := func() int {
		return e.count("SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'invoices' AND schemaname = current_schema()")
	}
	AnalyzeAfter = n + 1
	before := analyses()
	e.advance(clk, start.AddDate(0, 1, 0))
	if got := analyses(); got != before {
		t.Fatalf("a round of %d periods analyzed invoices (%d → %d) with AnalyzeAfter %d", n, before, got, AnalyzeAfter)
	}
	AnalyzeAfter = n
	e.advance(clk, start.AddDate(0, 2, 0))
	if got := analyses(); got <= before {
		t.Fatalf("a round of %d periods did not analyze invoices (%d → %d) with AnalyzeAfter %d", n, before, got, AnalyzeAfter)
	}
	e.checkBilledOnce(n, 3, 1000)
}

// TestSetManyJoinsOnPrimaryKey: each batch compare-and-set of a billing run
// (UPDATE ... FROM (VALUES ...), 250 rows) finds its rows by the table's
// primary key, one lookup per row, never by reading the table or a partial
// index of it. With the claim's "status = 'open'", SQLite read every open
// invoice through invoices_attempts_keyset for each chunk (the VALUES list
// was a compound of its first, cast row and the rest), so an attempt round
// grew with the square of the subscriptions.
func TestSetManyJoinsOnPrimaryKey(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		payable, payArgs := inList(payInvoice.from)
		periodable, periodArgs := inList(startPeriod.from)
		for _, c := range []struct {
			what, table string
			cols        []column
			cond        string
			condArgs    []any
		}{
			{"claim", "invoices", invMutable, "invoices.status = 'open'", nil},
			{"pay", "invoices", invMutable, "invoices.status IN (" + payable + ")", payArgs},
			{"period start", "subscriptions", subMutable, "subscriptions.status IN (" + periodable + ")", periodArgs},
		} {
			rows := make([][]any, setChunk)
			for i := range rows {
				rows[i] = make([]any, len(c.cols)+2)
				rows[i][0], rows[i][1] = fmt.Sprintf("id_%d", i), int64(1)
			}
			q, args, err := setManyQuery(db.Dialect(), c.table, c.cols, rows, c.cond, c.condArgs...)
			if err != nil {
				t.Fatal(err)
			}
			// The statement runs as written (PostgreSQL needs the first
			// row's casts to type the list); its rows match nothing.
			if err := db.InTx(context.Background(), func(tx *store.Tx) error {
				r, err := tx.Query(context.Background(), q, args...)
				if err != nil {
					return err
				}
				return store.AddIDs(r, map[string]bool{})
			}); err != nil {
				t.Fatalf("%s: %v", c.what, err)
			}
			plan := storetest.QueryPlan(t, db, q, args...)
			if !strings.Contains(plan, "SCAN ") && !strings.Contains(plan, "SEARCH ") {
				// Not SQLite's plan: PostgreSQL's join follows its
				// statistics, which an empty table's do not resemble
				// (TestBigRoundRefreshesStatistics).
				continue
			}
			if !strings.Contains(plan, "SEARCH "+c.table+" USING INDEX sqlite_autoindex_"+c.table+"_1 (id=?)") || strings.Contains(plan, "SCAN "+c.table) {
				t.Errorf("%s: the compare-and-set of %d %s is not a primary-key lookup per row:\n%s", c.what, setChunk, c.table, plan)
			}
		}
	})
}
