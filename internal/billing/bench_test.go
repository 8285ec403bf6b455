package billing

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/store/storetest"
)

var (
	benchSubs   = flag.String("billing.subs", "100,1000", "comma-separated subscription counts for BenchmarkAdvanceOnePeriod")
	benchEngine = flag.String("billing.engine", "postgres", "the engine of BenchmarkAdvanceOnePeriod: postgres or sqlite")
	benchCPU    = flag.String("billing.cpuprofile", "", "write a CPU profile of each timed advance (not the set-up) to this file, suffixed with the subscription count")
)

// BenchmarkAdvanceOnePeriod measures one test clock advance of one month
// over N monthly subscriptions on PostgreSQL (SQLite with
// -billing.engine=sqlite): N period starts (invoices, events) and N
// payment attempts (intents, ledger credits, invoice.paid). Setting up N
// subscriptions is not timed. -billing.subs=10000,100000 for the
// docs/performance.md figures. Besides the wall time it reports the
// process's CPU time over the advance (cpu-ms/advance).
func BenchmarkAdvanceOnePeriod(b *testing.B) {
	for _, n := range splitInts(*benchSubs) {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				db := storetest.Open(b, storetest.Engine(*benchEngine))
				e := newEnv(b, db)
				start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				clk := e.clock(start)
				e.populate(clk.ID, n, 1000)
				e.advance(clk, start) // the first period's attempts, so the timed advance is one period
				e.analyze()
				stop := startProfile(b, *benchCPU, n)
				b.StartTimer()
				began, cpu := time.Now(), processCPU()
				e.advance(clk, start.AddDate(0, 1, 0))
				b.ReportMetric(float64(time.Since(began).Milliseconds()), "ms/advance")
				// The process's CPU time over the advance: on a machine
				// other work loads, the part of the wall time that is
				// payd's own.
				b.ReportMetric(float64((processCPU() - cpu).Milliseconds()), "cpu-ms/advance")
				b.StopTimer()
				stop()
				if got := e.count("SELECT COUNT(*) FROM invoices WHERE status = 'paid'"); got != 2*n {
					b.Fatalf("%d paid invoices, want %d", got, 2*n)
				}
			}
		})
	}
}

// analyze refreshes the planner's statistics of the billing tables after a
// bulk load, as autovacuum would soon after it.
func (e *env) analyze() {
	e.t.Helper()
	if err := e.db.Analyze(context.Background(), "subscriptions", "invoices", "customers", "payment_intents", "events"); err != nil {
		e.t.Fatal(err)
	}
}

// startProfile starts a CPU profile into path.n when path is set, and
// returns what stops it.
func startProfile(b *testing.B, path string, n int) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", path, n))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func splitInts(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}
