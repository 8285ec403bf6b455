// Command core measures payd's HTTP core on one engine: authenticated GET
// /v1/balance (auth, rate limiter, logging, metrics, one indexed read) and
// idempotent creates (POST /v1/sandbox/topups, each with its own key: the
// idempotency claim, a ledger posting and the stored response), at 1, 16
// and 64 concurrent clients. It starts its own payd on a loopback port, over
// a temporary SQLite file or a fresh schema of the PostgreSQL database given.
//
//	go run ./bench/core -engine sqlite
//	go run ./bench/core -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_bench?sslmode=disable'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	dur := flag.Duration("duration", 5*time.Second, "duration of each step")
	clients := flag.String("clients", "1,16,64", "concurrency levels")
	flag.Parse()
	levels, err := harness.Levels("clients", *clients)
	if err != nil {
		harness.Fatal(err)
	}

	ctx := context.Background()
	m, cleanup, err := db.Start(ctx, harness.Configure(func(c *app.Config) { c.Workers = false }))
	if err != nil {
		harness.Fatal(err)
	}
	defer cleanup()
	c, err := harness.NewMerchant(ctx, m, "Bench", "")
	if err != nil {
		harness.Fatal(err)
	}
	api := harness.API{Base: m.URL(), Key: c.SecretKeys[0]}
	fmt.Printf("engine=%s cores=%d go=%s\n", db.Engine, runtime.NumCPU(), runtime.Version())

	fmt.Println("\nGET /v1/balance (authenticated read)")
	for _, n := range levels {
		report(loadgen.RunWith(loadgen.Options{Clients: n, Duration: *dur}, func(c *loadgen.Call) error {
			return api.With(c.HTTP).Get("/v1/balance", nil)
		}))
	}
	fmt.Println("\nPOST /v1/sandbox/topups with a fresh Idempotency-Key (idempotent create + ledger posting)")
	body := []byte(`{"currency":"DJF","amount_minor":5}`)
	for _, n := range levels {
		run := "bench-" + strconv.Itoa(n) + "-"
		report(loadgen.RunWith(loadgen.Options{Clients: n, Duration: *dur}, func(c *loadgen.Call) error {
			return api.With(c.HTTP).Do(harness.Request{Method: "POST", Path: "/v1/sandbox/topups", Body: body,
				IdempotencyKey: run + strconv.FormatInt(c.N, 10), Want: 201}, nil)
		}))
	}
}

// report prints a step's line, and its errors on stderr.
func report(r loadgen.Result) {
	fmt.Println(r)
	r.WriteFailures(os.Stderr)
}
