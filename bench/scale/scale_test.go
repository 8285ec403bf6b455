package main

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/retention"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestScaleSmall runs the bench with -check at a few thousand payment
// intents with short steps on both engines, so it cannot rot (CI runs the
// command itself at 100,000, see docs/performance.md): every step must
// answer without errors, the seeded ledger must verify, and the seeded rows
// must be the history the service would have written.
func TestScaleSmall(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			// SQLite: a copy of the migrated template (payd runs as is);
			// PostgreSQL: the database payd makes a schema of its own in.
			dbURL := storetest.URL(t, e)
			if e == storetest.SQLite {
				dbURL = storetest.MigratedURL(t, e)
			}
			cc := &harness.CostCurve{DB: &harness.Database{Engine: string(e), URL: dbURL},
				Max: 8, Sizes: []int{0, testSize}, Levels: []int{4}}
			var out strings.Builder
			sh, err := shapeOf("retained", retention.DefaultPolicy)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := run(context.Background(), config{cc: cc, merchants: 4, maxDisk: 35 << 30, verify: testSize, out: &out, check: true, chunk: testSize / 2, shape: sh})
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if len(rep.sizes) != 2 {
				t.Fatalf("measured %d sizes, want 2\n%s", len(rep.sizes), out.String())
			}
			last := rep.sizes[1]
			if !last.Verified {
				t.Errorf("the ledger was not verified at %d", testSize)
			}
			if last.Payments < testSize || last.BytesPerPayment <= 0 {
				t.Errorf("at %d: %d payments, %.0f bytes per payment", testSize, last.Payments, last.BytesPerPayment)
			}
			if want := min(deepPage*listLimit-listLimit, int(last.Payments)/2); last.DeepPageAfter < want {
				t.Errorf("the deep page starts after row %d, want at least %d", last.DeepPageAfter, want)
			}
			cols, rows := rep.table()
			if len(rows) != len(last.Steps)+3 || len(rows[0]) != len(cols) {
				t.Errorf("the table has %d rows of %d cells, want %d of %d", len(rows), len(rows[0]), len(last.Steps)+3, len(cols))
			}
		})
	}
}

// TestRetainedShape seeds the retained shape on both engines under a
// policy scaled down to the test's size (events kept for 600 rows of
// history, deliveries and attempts for 400, idempotency keys for 100), to
// 500 rows and then to 2,000, so that the second seed must first delete
// what falls out of each window: it counts each table's rows by hand, has
// checkSeeded agree, has checkSeeded with the whole shape disagree, and
// verifies the ledger.
func TestRetainedShape(t *testing.T) {
	pol := retention.Policy{Events: 600 * step, Deliveries: 400 * step, IdempotencyKeys: 100 * step}
	sh, err := shapeOf("retained", pol)
	if err != nil {
		t.Fatal(err)
	}
	if sh.events != 600 || sh.deliveries != 400 || sh.keys != 100 {
		t.Fatalf("windows %d, %d, %d rows, want 600, 400, 100", sh.events, sh.deliveries, sh.keys)
	}
	for _, e := range storetest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			m, s, err := startSeeder(t, e, 2000, sh)
			if err != nil {
				t.Fatal(err)
			}
			s.chunk = 250
			for _, step := range []struct {
				n                                 int
				events, deliveries, attempts, key int
			}{
				{500, 1000, 800, 800, 200},
				{2000, 1200, 800, 800, 200},
			} {
				var out strings.Builder
				if err := s.seed(ctx, step.n, &out); err != nil {
					t.Fatalf("%v\n%s", err, out.String())
				}
				for _, c := range []struct {
					table string
					want  int
				}{
					{"payment_intents", step.n}, {"ledger_transactions", step.n - step.n/10},
					{"events", step.events}, {"webhook_deliveries", step.deliveries}, {"webhook_attempts", step.attempts}, {"idempotency_keys", step.key},
				} {
					var got int
					if err := m.DB.QueryRow(ctx, "SELECT COUNT(*) FROM "+c.table).Scan(&got); err != nil {
						t.Fatal(err)
					}
					if got != c.want {
						t.Errorf("at %d: %s holds %d rows, want %d", step.n, c.table, got, c.want)
					}
				}
				if err := checkSeeded(ctx, m.DB, s, step.n); err != nil {
					t.Errorf("at %d: %v", step.n, err)
				}
			}
			whole := *s
			whole.shape = shape{name: "whole"}
			if err := checkSeeded(ctx, m.DB, &whole, 2000); err == nil {
				t.Error("checkSeeded took the retained history for a whole one")
			}
			if err := ledger.Verify(ctx, m.DB); err != nil {
				t.Error(err)
			}
			// The projection of a size past the windows grows only by the
			// tables that only grow.
			var total, payments int64
			if err := m.DB.QueryRow(ctx, m.DB.Engine().SizeQuery()).Scan(&total); err != nil {
				t.Fatal(err)
			}
			if err := m.DB.QueryRow(ctx, "SELECT COUNT(*) FROM payment_intents").Scan(&payments); err != nil {
				t.Fatal(err)
			}
			p, retained, err := diskParts(ctx, m.DB, sh, total, payments, 2000)
			if err != nil {
				t.Fatal(err)
			}
			if retained <= 0 || retained >= total || p.perPayment <= 0 {
				t.Fatalf("retained tables %d of %d bytes, %.0f bytes per payment of the others", retained, total, p.perPayment)
			}
			if d, want := p.bytes(sh, 4000)-p.bytes(sh, 2000), 2000*p.perPayment; d < want*0.999 || d > want*1.001 {
				t.Errorf("2,000 more payments past the windows project %.0f more bytes, want %.0f", d, want)
			}
		})
	}
}

// testSize is the test's seeded payment intents, seeded in two chunks (as
// larger sizes are) so that rows must follow one another across them.
const testSize = 1_000

// TestSeedKeepsSchema seeds a migrated database the way a large seed does
// (its secondary indexes and, on PostgreSQL, its foreign keys dropped
// before the rows go in and made again after) and checks on both engines
// that the schema after is the migrated one: every table, index and
// constraint with the same definition, as sqlite_master and PostgreSQL's
// catalog show them.
func TestSeedKeepsSchema(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			m, s, err := startSeeder(t, e, 200, shape{name: "whole"})
			if err != nil {
				t.Fatal(err)
			}
			s.chunk = 100
			before := schemaOf(ctx, t, m.DB)
			var out strings.Builder
			if err := s.seed(ctx, 200, &out); err != nil {
				t.Fatal(err)
			}
			// The seed must have taken the indexes down, or this checks
			// nothing.
			if !strings.Contains(out.String(), "indexes built") {
				t.Fatalf("the seed kept its indexes:\n%s", out.String())
			}
			if e == storetest.Postgres && !strings.Contains(out.String(), "foreign keys checked") {
				t.Fatalf("the seed kept its foreign keys:\n%s", out.String())
			}
			after := schemaOf(ctx, t, m.DB)
			if d := diffLines(before, after); d != "" {
				t.Errorf("the schema after seeding differs from the migrated one:\n%s", d)
			}
			if err := checkSeeded(ctx, m.DB, s, 200); err != nil {
				t.Error(err)
			}
		})
	}
}

// schemaOf is the database's schema as lines of text, sorted: on SQLite
// sqlite_master's rows (tables, indexes with their SQL, and the unnamed
// indexes of keys), on PostgreSQL the schema's indexes (pg_indexes) and
// constraints (pg_get_constraintdef), each with its table.
func schemaOf(ctx context.Context, t *testing.T, db *store.DB) []string {
	t.Helper()
	rows, err := db.Query(ctx, db.Engine().SchemaQuery())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 50 {
		t.Fatalf("the schema has %d objects: not payd's", len(out))
	}
	sort.Strings(out)
	return out
}

// diffLines lists the lines only in a (-) and only in b (+).
func diffLines(a, b []string) string {
	in := func(ss []string) map[string]bool {
		m := map[string]bool{}
		for _, s := range ss {
			m[s] = true
		}
		return m
	}
	ina, inb := in(a), in(b)
	var d []string
	for _, s := range a {
		if !inb[s] {
			d = append(d, "- "+s)
		}
	}
	for _, s := range b {
		if !ina[s] {
			d = append(d, "+ "+s)
		}
	}
	return strings.Join(d, "\n")
}

// startSeeder starts payd on a fresh database of engine e (stopped when
// the test ends) with three merchants and returns a seeder of chunk rows
// for shape sh over it.
func startSeeder(t *testing.T, e storetest.Engine, chunk int, sh shape) (*app.Main, *seeder, error) {
	t.Helper()
	ctx := context.Background()
	dbURL := storetest.URL(t, e)
	if e == storetest.SQLite {
		dbURL = storetest.MigratedURL(t, e)
	}
	m, cleanup, err := harness.StartPayd(ctx, string(e), dbURL)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(cleanup)
	sms, _, err := makeMerchants(ctx, m, 3, "http://127.0.0.1:1/payd")
	if err != nil {
		return nil, nil, err
	}
	s, err := newSeeder(ctx, m.DB, sms, chunk, sh)
	return m, s, err
}
