package main

import (
	"context"
	"strings"
	"testing"

	"github.com/payd/payd/bench/harness"
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
