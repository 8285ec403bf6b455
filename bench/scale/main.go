// Command scale measures how the payment-intent hot paths cost as the
// database grows: it starts its own payd on a loopback port, measures
// create, retrieve, list (first page and with a created[gte] filter),
// GET /v1/balance and an idempotent replay of a create, then seeds payment
// intents (with their events and ledger rows) straight in SQL up to the next
// size and measures again.
//
//	go run ./bench/scale                                  # SQLite, sizes 0,100000
//	go run ./bench/scale -engine postgres -seed 0,100000,1000000
//	go run ./bench/scale -db postgres://127.0.0.1/payd_test -seed 1000000
//
// Every step is bounded by -duration and -max; nothing but loopback is loaded.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	sizes := flag.String("seed", "0,100000", "database sizes (payment intents in all) to measure at, ascending")
	dur := flag.Duration("duration", 2*time.Second, "duration of each step")
	maxOps := flag.Int64("max", 3000, "at most this many requests per step")
	clients := flag.String("clients", "1,16", "concurrency levels")
	explain := flag.Bool("explain", true, "print the query plans of the list queries at each size")
	flag.Parse()
	levels, err := harness.Levels("clients", *clients)
	if err != nil {
		harness.Fatal(err)
	}
	targets, err := harness.Sizes("seed", *sizes)
	if err != nil {
		harness.Fatal(err)
	}

	ctx := context.Background()
	m, cleanup, err := db.Start(ctx)
	if err != nil {
		harness.Fatal(err)
	}
	defer cleanup()
	var mids [3]string
	var key, writeKey string
	for i := range mids {
		c, err := harness.NewMerchant(ctx, m, "Scale bench "+strconv.Itoa(i), "")
		if err != nil {
			harness.Fatal(err)
		}
		mids[i] = c.MerchantID
		switch i {
		case 0:
			key = c.SecretKeys[0]
		case 1:
			writeKey = c.SecretKeys[0]
		}
	}
	s := &seeder{db: m.DB, mids: mids, now: m.DB.Now()}
	api := harness.API{Base: m.URL(), Key: key}
	// Creates go to the second merchant so the measured one's lists hold
	// only the seeded intents.
	writer := harness.API{Base: m.URL(), Key: writeKey}
	fmt.Printf("engine=%s step=%s max=%d clients=%s cores=2 load=%s\n", db.Engine, *dur, *maxOps, *clients, harness.LoadAvg())

	for _, n := range targets {
		if n > s.done {
			t := time.Now()
			if err := s.seed(ctx, n); err != nil {
				harness.Fatal(fmt.Errorf("seed to %d: %w", n, err))
			}
			fmt.Printf("\nseeded payment intents %d..%d (with events and ledger rows) in %s\n", s.prev, n, time.Since(t).Round(time.Millisecond))
		}
		fmt.Printf("\n=== %d payment intents in the database (load %s)\n", n, harness.LoadAvg())
		if err := measure(ctx, api, writer, levels, *dur, *maxOps); err != nil {
			harness.Fatal(err)
		}
		if *explain {
			s.explain(ctx, os.Stdout)
		}
	}
}

var createBody = []byte(`{"amount":1500,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377123456","description":"scale bench"}`)

func measure(ctx context.Context, api, writer harness.API, levels []int, dur time.Duration, maxOps int64) error {
	var first struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	// One intent so every size has something to retrieve, and one key to
	// replay.
	idem := "scale-" + harness.RandomHex(8)
	if err := api.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents", Body: createBody, IdempotencyKey: "scale-" + harness.RandomHex(8), Want: 201}, nil); err != nil {
		return err
	}
	if err := writer.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents", Body: createBody, IdempotencyKey: idem, Want: 201}, nil); err != nil {
		return err
	}
	if err := api.Get("/v1/payment_intents?limit=100", &first); err != nil {
		return err
	}
	retrieveID := first.Data[len(first.Data)-1].ID
	since := strconv.FormatInt(time.Now().Add(-24*time.Hour).Unix(), 10)
	tag := "scale-" + harness.RandomHex(4) + "-"
	steps := []struct {
		name  string
		write bool // run with the second merchant's key
		op    func(a harness.API, n int64) error
	}{
		{"POST /v1/payment_intents", true, func(a harness.API, n int64) error {
			return a.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents", Body: createBody, IdempotencyKey: tag + strconv.FormatInt(n, 10), Want: 201}, nil)
		}},
		{"POST /v1/payment_intents (idempotent replay)", true, func(a harness.API, n int64) error {
			return a.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents", Body: createBody, IdempotencyKey: idem, Want: 201}, nil)
		}},
		{"GET /v1/payment_intents/{id}", false, func(a harness.API, n int64) error {
			return a.Get("/v1/payment_intents/"+url.PathEscape(retrieveID), nil)
		}},
		{"GET /v1/payment_intents?limit=10", false, func(a harness.API, n int64) error {
			return a.Get("/v1/payment_intents?limit=10", nil)
		}},
		{"GET /v1/payment_intents?limit=10&created[gte]=-24h", false, func(a harness.API, n int64) error {
			return a.Get("/v1/payment_intents?limit=10&created%5Bgte%5D="+since, nil)
		}},
		{"GET /v1/balance", false, func(a harness.API, n int64) error {
			return a.Get("/v1/balance", nil)
		}},
	}
	for _, st := range steps {
		fmt.Printf("%s\n", st.name)
		for _, cl := range levels {
			tag = "scale-" + harness.RandomHex(4) + "-"
			res := loadgen.RunWith(loadgen.Options{Clients: cl, Duration: dur, MaxOps: maxOps}, func(c *loadgen.Call) error {
				a := api
				if st.write {
					a = writer
				}
				return st.op(a.With(c.HTTP), c.N)
			})
			fmt.Printf("  %s\n", res)
			res.WriteFailures(os.Stdout)
		}
	}
	return nil
}
