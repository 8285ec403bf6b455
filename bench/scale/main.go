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
	cc := harness.CostCurveFlags(flag.CommandLine, harness.CostCurveDefaults{
		Sizes: "0,100000", SizesUsage: "database sizes (payment intents in all) to measure at, ascending", Max: 3000, Explain: true})
	flag.Parse()
	if err := cc.Parse(); err != nil {
		harness.Fatal(err)
	}
	ctx := context.Background()
	m, ms, cleanup, err := cc.Start(ctx, "Scale bench", 3)
	if err != nil {
		harness.Fatal(err)
	}
	defer cleanup()
	s := &seeder{db: m.DB, mids: [3]string{ms[0].MerchantID, ms[1].MerchantID, ms[2].MerchantID}, now: m.DB.Now()}
	api := harness.API{Base: m.URL(), Key: ms[0].SecretKeys[0]}
	// Creates go to the second merchant so the measured one's lists hold
	// only the seeded intents.
	writer := harness.API{Base: m.URL(), Key: ms[1].SecretKeys[0]}
	fmt.Println(cc.Header())
	err = cc.Walk("payment intents in the database", func(n int) (string, error) {
		if err := s.seed(ctx, n); err != nil {
			return "", err
		}
		return fmt.Sprintf("seeded payment intents %d..%d (with events and ledger rows)", s.prev, n), nil
	}, func(n int) error {
		if err := measure(ctx, api, writer, cc.Levels, cc.Duration, cc.Max); err != nil {
			return err
		}
		if cc.Explain {
			s.explain(ctx, os.Stdout)
		}
		return nil
	})
	if err != nil {
		harness.Fatal(err)
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
