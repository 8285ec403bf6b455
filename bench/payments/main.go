// Command payments is the payment-intent load benchmark: clients that each
// create a bank_a intent and confirm it with the sandbox code, as fast as
// they can, at several concurrency levels. It reports create+confirm pairs
// per second and pair latency percentiles.
//
// It starts payd itself on 127.0.0.1:0 (SQLite in a temporary directory, or
// a fresh schema of the PostgreSQL database given) unless -url points at a
// running payd on loopback:
//
//	go run ./bench/payments -engine sqlite
//	go run ./bench/payments -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_test?sslmode=disable'
//	go run ./bench/payments -url http://127.0.0.1:8080 -key sk_test_...
//
// Every run is bounded: -duration per level and -max-pairs per level.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	_ "net/http/pprof"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	target := flag.String("url", "", "benchmark a running payd at this URL instead of starting one")
	key := flag.String("key", os.Getenv("PAYD_API_KEY"), "secret test key for -url")
	clients := flag.String("clients", "1,16,64", "comma-separated client counts")
	duration := flag.Duration("duration", 10*time.Second, "measuring time per level")
	warmup := flag.Duration("warmup", 2*time.Second, "unmeasured time before each level")
	maxPairs := flag.Int64("max-pairs", 100000, "stop a level after this many pairs")
	logLevel := flag.String("log-level", "warn", "payd's log level when started here (info logs every request)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (payd included when started here)")
	nMerchants := flag.Int("merchants", 1, "spread the clients over this many merchants (each merchant's balance rows are a hot spot)")
	requestLog := flag.Bool("request-log", true, "keep the request log (false: PAYD_REQUEST_LOG=false) when payd is started here")
	poolSize := flag.Int("db-max-conns", 0, "payd's database pool size when started here (PAYD_DB_MAX_CONNS; 0: the engine's default)")
	createsOnly := flag.Bool("creates-only", false, "each operation is one keyed create (no confirm): the idempotent create's own rate")
	pprofAddr := flag.String("pprof", "", "serve net/http/pprof at this address during the run (e.g. 127.0.0.1:6060, for a trace or a block profile of a window)")
	flag.Parse()
	if *pprofAddr != "" {
		runtime.SetBlockProfileRate(int(10 * time.Microsecond))
		runtime.SetMutexProfileFraction(10)
		go func() { harness.Fatal(http.ListenAndServe(*pprofAddr, nil)) }()
	}
	levels, err := harness.Levels("clients", *clients)
	if err != nil {
		harness.Fatal(err)
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			harness.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			harness.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	base, keys, engine := *target, []string{*key}, db.Engine
	if base == "" {
		ctx := context.Background()
		m, cleanup, err := db.Start(ctx, harness.Logs(os.Stderr, *logLevel),
			harness.Configure(func(c *app.Config) { c.RequestLog, c.DBMaxConns = *requestLog, *poolSize }))
		if err != nil {
			harness.Fatal(err)
		}
		defer cleanup()
		slog.SetDefault(m.Logger)
		keys = nil
		for i := range max(*nMerchants, 1) {
			c, err := harness.NewMerchant(ctx, m, fmt.Sprintf("Bench %d", i), "")
			if err != nil {
				harness.Fatal(err)
			}
			keys = append(keys, c.SecretKeys[0])
		}
		base = m.URL()
	} else if err := harness.RequireLoopback(base); err != nil {
		harness.Fatal(err)
	} else if *key == "" {
		harness.Fatal(fmt.Errorf("-url needs -key (or PAYD_API_KEY)"))
	} else {
		engine = "external " + base
	}

	fmt.Printf("payments bench: engine=%s merchants=%d cpus=%d go=%s load=%s\n", engine, len(keys), runtime.NumCPU(), runtime.Version(), harness.LoadAvg())
	op := "pairs"
	if *createsOnly {
		op = "creates"
	}
	fmt.Printf("%-8s %8s %10s %9s %9s %9s %11s %11s %7s\n", "clients", op, op+"/s", "p50_ms", "p99_ms", "max_ms", "create_p99", "confirm_p99", "errors")
	for _, n := range levels {
		if *warmup > 0 {
			run(base, keys, *createsOnly, loadgen.Options{Clients: n, Duration: *warmup})
		}
		r := run(base, keys, *createsOnly, loadgen.Options{Clients: n, Duration: *duration, MaxOps: *maxPairs})
		fmt.Printf("%-8d %8d %10.0f %9.2f %9.2f %9.2f %11.2f %11.2f %7d\n", n, r.Succeeded(), float64(r.Succeeded())/r.Elapsed.Seconds(),
			loadgen.MS(r.P50), loadgen.MS(r.P99), loadgen.MS(r.Max), loadgen.MS(r.Phases["create"].Percentile(99)),
			loadgen.MS(r.Phases["confirm"].Percentile(99)), r.Errors)
		r.WriteFailures(os.Stderr)
	}
	fmt.Printf("load after: %s\n", harness.LoadAvg())
}

// run drives create+confirm pairs (or keyed creates alone); client c uses
// keys[c % len(keys)].
func run(base string, keys []string, createsOnly bool, o loadgen.Options) loadgen.Result {
	tag := "bench-" + harness.RandomHex(4) + "-"
	return loadgen.RunWith(o, func(c *loadgen.Call) error {
		api := harness.API{Base: base, Key: keys[c.Client%len(keys)], HTTP: c.HTTP}
		t0 := time.Now()
		id, err := createIntent(api, tag+strconv.FormatInt(c.N, 10))
		if err != nil {
			return err
		}
		t1 := time.Now()
		if createsOnly {
			c.Record("create", t1.Sub(t0))
			return nil
		}
		if err := confirmIntent(api, id); err != nil {
			return err
		}
		c.Record("create", t1.Sub(t0))
		c.Record("confirm", time.Since(t1))
		return nil
	})
}

var createBody = []byte(`{"amount":1500,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377123456","description":"bench"}`)

func createIntent(api harness.API, idem string) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := api.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents", Body: createBody, IdempotencyKey: idem, Want: 201}, &out)
	return out.ID, err
}

// confirmIntent confirms with the sandbox code, without an Idempotency-Key
// (a pair is one idempotent create and one plain confirm).
func confirmIntent(api harness.API, id string) error {
	var out struct {
		Status string `json:"status"`
	}
	if err := api.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents/" + url.PathEscape(id) + "/confirm", Body: `{"otp":"123456"}`}, &out); err != nil {
		return err
	}
	if out.Status != "succeeded" {
		return fmt.Errorf("confirm left %s %s", id, out.Status)
	}
	return nil
}
