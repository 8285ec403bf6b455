// Command scale measures how payd's hot paths cost as the database grows:
// it starts its own payd on a loopback port with 100 merchants (one of them
// hot, holding half the history), each with a webhook endpoint on a local
// sink, and at each size measures keyed creates and create+confirm pairs
// (throughput and p99), the p99 of GET one intent, GET /v1/balance, the
// payment-intent list's first page and its 1000th page, a settlement
// report and a balance-transaction page, and the database's bytes per
// payment. Between sizes it seeds payment-intent histories straight in SQL
// (seed.go), set-based as a restore would.
//
//	go run ./bench/scale                                    # SQLite, sizes 0,1000000,10000000
//	go run ./bench/scale -engine postgres                   # PostgreSQL (PAYD_TEST_DATABASE_URL)
//	go run ./bench/scale -check -seed 0,100000 -duration 0 -max 200 -clients 4   # as CI runs it (steps bounded by count only)
//
// Before it seeds past 100,000 rows it projects the size from the bytes per
// payment measured so far and stops (saying so) when the next size would
// pass -max-disk. Every step is bounded by -duration and -max; nothing but
// loopback is loaded. The table goes to stdout and, with -json, to a
// results file.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/internal/retention"
)

func main() {
	cc := harness.CostCurveFlags(flag.CommandLine, harness.CostCurveDefaults{
		Sizes: "0,1000000,10000000", SizesUsage: "database sizes (payment intents in all) to measure at, ascending", Max: 20000})
	merchantsN := flag.Int("merchants", 100, "merchants (the first is hot: half the rows)")
	maxDisk := flag.Int64("max-disk", 35_000_000_000, "bytes: stop before a size whose projected database would pass this")
	verify := flag.Int("verify", 100_000, "run ledger.Verify on the database at each size up to this many payment intents (0: never)")
	check := flag.Bool("check", false, "fail on any failed request and check the seeded rows at each size (as CI runs it)")
	history := flag.String("history", "retained", "retained: seed what payd's default retention policy keeps (every intent and its ledger; events, deliveries, attempts and idempotency keys only inside their horizons); whole: keep all of every payment's history (the worst case)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of each step named by -profile-step to this path (the size and client count appended)")
	profileStep := flag.String("profile-step", "settlement", "with -cpuprofile: profile the steps whose name contains this")
	jsonOut := flag.String("json", "", "write the results here (bench/results/<date>-scale-<engine>.json is the convention)")
	flag.Parse()
	if err := cc.Parse(); err != nil {
		harness.Fatal(err)
	}
	sh, err := shapeOf(*history, retention.DefaultPolicy)
	if err != nil {
		harness.Fatal(err)
	}
	cfg := config{cc: cc, merchants: *merchantsN, maxDisk: *maxDisk, verify: *verify, check: *check, out: os.Stdout, shape: sh,
		cpuProfile: *cpuProfile, profileStep: *profileStep}
	start := time.Now().UTC()
	rep, err := run(context.Background(), cfg)
	if rep != nil {
		rep.print(os.Stdout)
		if *jsonOut != "" {
			if werr := rep.writeJSON(*jsonOut, start, os.Args); werr != nil {
				fmt.Fprintln(os.Stderr, werr)
			}
		}
	}
	if err != nil {
		harness.Fatal(err)
	}
}
