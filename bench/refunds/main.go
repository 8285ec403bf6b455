// Command refunds is the refund load benchmark: clients that each create a
// sandbox refund of 1 DJF on one of a pool of succeeded bank_a payments, as
// fast as they can, at several concurrency levels. It reports refund creates
// per second and latency percentiles.
//
// Every create reserves the amount on the merchant's available balance,
// checks and bumps the intent's refundable sum, writes the refund and its two
// events and settles it at once (the sandbox answers in process), all in one
// transaction: the merchant's balance rows are the hot spot, as for payments.
// The pool spreads the intents' rows (-intents).
//
//	go run ./bench/refunds -engine sqlite
//	go run ./bench/refunds -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_test?sslmode=disable'
//
// Every run is bounded: -duration per level and -max-refunds per level.
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
	maxRefunds := flag.Int64("max-refunds", 100000, "stop a level after this many refunds")
	nIntents := flag.Int("intents", 64, "how many payments the refunds are spread over")
	logLevel := flag.String("log-level", "warn", "payd's log level")
	flag.Parse()
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
	c, err := harness.NewMerchant(ctx, m, "Refund bench", "")
	if err != nil {
		harness.Fatal(err)
	}
	api := harness.API{Base: m.URL(), Key: c.SecretKeys[0]}
	intents := make([]string, *nIntents)
	for i := range intents {
		if intents[i], err = paidIntent(api, "bench-pay-"+strconv.Itoa(i)); err != nil {
			harness.Fatal(err)
		}
	}

	fmt.Printf("refunds bench: engine=%s intents=%d cpus=%d go=%s load=%s\n", db.Engine, len(intents), runtime.NumCPU(), runtime.Version(), harness.LoadAvg())
	fmt.Printf("%-8s %8s %10s %9s %9s %9s %7s\n", "clients", "refunds", "refunds/s", "p50_ms", "p99_ms", "max_ms", "errors")
	for _, n := range levels {
		if *warmup > 0 {
			run(api, intents, loadgen.Options{Clients: n, Duration: *warmup})
		}
		r := run(api, intents, loadgen.Options{Clients: n, Duration: *duration, MaxOps: *maxRefunds})
		fmt.Printf("%-8d %8d %10.0f %9.2f %9.2f %9.2f %7d\n", n, r.Succeeded(), float64(r.Succeeded())/r.Elapsed.Seconds(),
			loadgen.MS(r.P50), loadgen.MS(r.P99), loadgen.MS(r.Max), r.Errors)
		r.WriteFailures(os.Stderr)
	}
	fmt.Printf("load after: %s\n", harness.LoadAvg())
}

// paidIntent makes a succeeded bank_a payment large enough for every refund
// of the run.
func paidIntent(api harness.API, idem string) (string, error) {
	var in struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	body := `{"amount_minor":10000000,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377123456"}`
	if err := api.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents", Body: body, IdempotencyKey: idem, Want: 201}, &in); err != nil {
		return "", err
	}
	if err := api.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents/" + in.ID + "/confirm", Body: `{"otp":"123456"}`}, &in); err != nil {
		return "", err
	}
	if in.Status != "succeeded" {
		return "", fmt.Errorf("payment %s is %s", in.ID, in.Status)
	}
	return in.ID, nil
}

// run drives refund creates; call n of client c refunds 1 DJF of one of the
// pool's intents.
func run(api harness.API, intents []string, o loadgen.Options) loadgen.Result {
	tag := "bench-re-" + harness.RandomHex(4) + "-"
	return loadgen.RunWith(o, func(c *loadgen.Call) error {
		a := api.With(c.HTTP)
		pi := intents[(int(c.N)*7+c.Client)%len(intents)]
		var out struct {
			Status string `json:"status"`
		}
		body := `{"payment_intent":"` + pi + `","amount_minor":1,"reason":"requested_by_customer"}`
		if err := a.Do(harness.Request{Method: "POST", Path: "/v1/refunds", Body: body, IdempotencyKey: tag + strconv.FormatInt(c.N, 10), Want: 201}, &out); err != nil {
			return err
		}
		if out.Status != "succeeded" {
			return fmt.Errorf("refund of %s is %s", pi, out.Status)
		}
		return nil
	})
}
