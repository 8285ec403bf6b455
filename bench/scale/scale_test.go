package main

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/payd/payd/bench/harness"
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
			rep, err := run(context.Background(), config{cc: cc, merchants: 4, maxDisk: 35 << 30, verify: testSize, out: &out, check: true, chunk: testSize / 2})
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
			if len(rows) != len(last.Steps)+1 || len(rows[0]) != len(cols) {
				t.Errorf("the table has %d rows of %d cells, want %d of %d", len(rows), len(rows[0]), len(last.Steps)+1, len(cols))
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
			dbURL := storetest.URL(t, e)
			if e == storetest.SQLite {
				dbURL = storetest.MigratedURL(t, e)
			}
			m, cleanup, err := harness.StartPayd(ctx, string(e), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			sms, _, err := makeMerchants(ctx, m, 3, "http://127.0.0.1:1/payd")
			if err != nil {
				t.Fatal(err)
			}
			s, err := newSeeder(ctx, m.DB, sms, 200)
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
