// Command lifecycle is the manual-capture and cancel load benchmark: clients
// that each create a manual-capture card payment the sandbox authorises at
// once (the success scenario, chosen by its magic customer number), then
// capture it (odd operations) or cancel it (even operations), as fast as
// they can, at several concurrency levels. It reports operations (create +
// capture or cancel) per second and the latency percentiles of each step.
//
// A capture credits the merchant's available balance (the ledger posting of
// any payment) and emits payment_intent.succeeded; a cancel releases the
// authorisation with payment_intent.canceled and no posting.
//
//	go run ./bench/lifecycle -engine sqlite
//	go run ./bench/lifecycle -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_test?sslmode=disable'
//
// -step capture or -step cancel measures one of them alone (every operation
// captures, or every one cancels); the default alternates them. The
// one-command scenarios at 16 clients:
//
//	go run ./bench/lifecycle -engine sqlite -clients 16 -step capture
//	go run ./bench/lifecycle -engine sqlite -clients 16 -step cancel
//
// Every run is bounded: -duration per level and -max-ops per level.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	clients := flag.String("clients", "1,16", "comma-separated client counts")
	duration := flag.Duration("duration", 10*time.Second, "measuring time per level")
	warmup := flag.Duration("warmup", 2*time.Second, "unmeasured time before each level")
	maxOps := flag.Int64("max-ops", 100000, "stop a level after this many operations")
	logLevel := flag.String("log-level", "warn", "payd's log level")
	stepFlag := flag.String("step", "both", "what follows each create: capture, cancel, or both (alternating)")
	flag.Parse()
	if *stepFlag != "both" && *stepFlag != "capture" && *stepFlag != "cancel" {
		harness.Fatal(fmt.Errorf("-step must be capture, cancel or both, not %q", *stepFlag))
	}
	levels, err := harness.Levels("clients", *clients)
	if err != nil {
		harness.Fatal(err)
	}
	ctx := context.Background()
	m, cleanup, err := db.Start(ctx, harness.Logs(os.Stderr, *logLevel))
	if err != nil {
		harness.Fatal(err)
	}
	defer cleanup()
	slog.SetDefault(m.Logger)
	c, err := harness.NewMerchant(ctx, m, "Lifecycle bench", "")
	if err != nil {
		harness.Fatal(err)
	}
	api := harness.API{Base: m.URL(), Key: c.SecretKeys[0]}

	fmt.Printf("lifecycle bench: engine=%s step=%s cpus=%d go=%s load=%s\n", db.Engine, *stepFlag, runtime.NumCPU(), runtime.Version(), harness.LoadAvg())
	fmt.Printf("%-8s %8s %8s %9s %9s %9s %9s %9s %7s\n", "clients", "ops", "ops/s", "create_p50", "create_p99", "capture_p99", "cancel_p99", "max_ms", "errors")
	for _, n := range levels {
		if *warmup > 0 {
			run(api, loadgen.Options{Clients: n, Duration: *warmup}, *stepFlag)
		}
		r := run(api, loadgen.Options{Clients: n, Duration: *duration, MaxOps: *maxOps}, *stepFlag)
		ph := func(name string, p float64) float64 { return loadgen.MS(r.Phases[name].Percentile(p)) }
		fmt.Printf("%-8d %8d %8.0f %9.2f %9.2f %9.2f %9.2f %9.2f %7d\n", n, r.Succeeded(), float64(r.Succeeded())/r.Elapsed.Seconds(),
			ph("create", 50), ph("create", 99), ph("capture", 99), ph("cancel", 99), loadgen.MS(r.Max), r.Errors)
		r.WriteFailures(os.Stderr)
	}
	fmt.Printf("load after: %s\n", harness.LoadAvg())
}

// run drives the operations: create an authorised manual-capture card
// payment, then capture or cancel it (steps both: capture odd n, cancel
// even n).
func run(api harness.API, o loadgen.Options, steps string) loadgen.Result {
	tag := "bench-lc-" + harness.RandomHex(4) + "-"
	body := `{"amount_minor":1000,"currency":"USD","provider":"wallet_a","capture_method":"manual",` +
		`"customer_msisdn":"+253000000001","return_url":"https://shop.example/return","metadata":{"wallet_a_mode":"card"}}`
	return loadgen.RunWith(o, func(c *loadgen.Call) error {
		a := api.With(c.HTTP)
		var in struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		start := time.Now()
		if err := a.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents", Body: body, IdempotencyKey: tag + strconv.FormatInt(c.N, 10), Want: 201}, &in); err != nil {
			return err
		}
		c.Record("create", time.Since(start))
		if in.Status != "requires_capture" {
			return fmt.Errorf("payment %s is %s, want requires_capture", in.ID, in.Status)
		}
		step, want := "capture", "succeeded"
		if steps == "cancel" || steps == "both" && c.N%2 == 0 {
			step, want = "cancel", "canceled"
		}
		start = time.Now()
		if err := a.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents/" + in.ID + "/" + step}, &in); err != nil {
			return err
		}
		c.Record(step, time.Since(start))
		if in.Status != want {
			return fmt.Errorf("payment %s is %s after %s", in.ID, in.Status, step)
		}
		return nil
	})
}
