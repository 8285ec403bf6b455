// Command billing measures a test clock advance of one billing period as
// the number of subscriptions grows. For each size it starts its own payd
// on a loopback port over a fresh database, creates N customers (each
// paying by wallet_c push) with a monthly subscription on one test clock
// through the billing service, advances the clock to the subscriptions'
// start (their first payments) and refreshes the planner's statistics as
// autovacuum would, then times one advance of a month through the API:
// POST .../advance and polling the clock until it is ready again, while
// payd's own job runner bills N periods and collects N payments. It then
// checks that 2N invoices are paid, with one invoice.paid each, and that the
// ledger balances.
//
//	go run ./bench/billing -engine postgres -subs 100,1000,10000
//	go run ./bench/billing -engine postgres -subs 100000 -timeout 2h   # the long end of the curve
//	go run ./bench/billing -engine sqlite -subs 100,1000
package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/billing"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	sizes := flag.String("subs", "100,1000,10000", "subscription counts to measure, one fresh payd each")
	seeders := flag.Int("seeders", 8, "customers and subscriptions created at once while seeding (1 on SQLite)")
	timeout := flag.Duration("timeout", 30*time.Minute, "give up on one advance after this long")
	flag.Parse()
	ns, err := harness.Levels("subs", *sizes)
	if err != nil {
		harness.Fatal(err)
	}
	fmt.Printf("engine %s; load average at start %s\n", db.Engine, harness.LoadAvg())
	fmt.Printf("%12s %14s %16s %12s %s\n", "subscriptions", "seed", "advance (1 mo)", "per sub", "load average after")
	for _, n := range ns {
		if err := measure(db, n, *seeders, *timeout); err != nil {
			harness.Fatal(fmt.Errorf("%d subscriptions: %w", n, err))
		}
	}
}

func measure(db *harness.Database, n, seeders int, timeout time.Duration) error {
	ctx := context.Background()
	m, cleanup, err := db.Start(ctx)
	if err != nil {
		return err
	}
	defer cleanup()
	c, err := harness.NewMerchant(ctx, m, "Billing bench", "")
	if err != nil {
		return err
	}
	api := harness.API{Base: m.URL(), Key: c.SecretKeys[0]}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var clock billing.TestClock
	if err := api.Post("/v1/test_helpers/test_clocks", map[string]any{"frozen_time": start.Unix()}, 201, &clock); err != nil {
		return err
	}
	began := time.Now()
	if err := seed(ctx, m.Billing(), auth.Principal{ID: "bench", MerchantID: c.MerchantID, Kind: "secret"}, clock.ID, n, seeders, m.DB.Engine()); err != nil {
		return err
	}
	if err := advance(api, clock.ID, start, timeout); err != nil {
		return fmt.Errorf("first advance: %w", err)
	}
	seeded := time.Since(began)
	if err := m.DB.Analyze(ctx, "subscriptions", "invoices", "customers", "payment_intents", "events"); err != nil {
		return err
	}
	began = time.Now()
	if err := advance(api, clock.ID, start.AddDate(0, 1, 0), timeout); err != nil {
		return err
	}
	took := time.Since(began)
	fmt.Printf("%12d %14s %16s %12s %s\n", n, seeded.Round(time.Millisecond), took.Round(time.Millisecond),
		(took / time.Duration(n)).Round(time.Microsecond), harness.LoadAvg())
	return check(ctx, m, n)
}

// seed creates n customers, each with a monthly subscription on the clock,
// through the billing service.
func seed(ctx context.Context, svc *billing.Service, p auth.Principal, clock string, n, workers int, d store.Engine) error {
	if !d.ConcurrentWriters() {
		workers = 1
	}
	next := make(chan int)
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				name, msisdn, amount := "Customer "+strconv.Itoa(i), "+25377123456", int64(1500)
				cu, err := svc.CreateCustomer(ctx, store.NoClaim, p, billing.CustomerParams{Name: &name, TestClock: &clock,
					DefaultPayment: &billing.DefaultPayment{Provider: "wallet_c", CustomerMSISDN: &msisdn}})
				if err == nil {
					_, err = svc.CreateSubscription(ctx, store.NoClaim, p, billing.SubscriptionParams{Customer: cu.ID, Currency: "DJF", Interval: "month",
						Items: []billing.ItemParams{{Description: "Fibre 100", AmountMinor: &amount}}})
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// advance moves the clock through the API and waits until it is ready.
func advance(api harness.API, clock string, to time.Time, timeout time.Duration) error {
	var c billing.TestClock
	if err := api.Post("/v1/test_helpers/test_clocks/"+clock+"/advance", map[string]any{"frozen_time": to.Unix()}, 200, &c); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for c.Status != billing.ClockReady {
		if time.Now().After(deadline) {
			return fmt.Errorf("the clock is still %s after %s", c.Status, timeout)
		}
		time.Sleep(20 * time.Millisecond)
		if err := api.Get("/v1/test_helpers/test_clocks/"+clock, &c); err != nil {
			return err
		}
	}
	return nil
}

// check verifies the run: two paid invoices per subscription, each with
// one invoice.paid, and a balanced ledger.
func check(ctx context.Context, m *app.Main, n int) error {
	count := func(q string) (int, error) {
		var k int
		err := m.DB.QueryRow(ctx, q).Scan(&k)
		return k, err
	}
	for q, want := range map[string]int{
		"SELECT COUNT(*) FROM invoices":                                   2 * n,
		"SELECT COUNT(*) FROM invoices WHERE status = 'paid'":             2 * n,
		"SELECT COUNT(*) FROM events WHERE type = 'invoice.paid'":         2 * n,
		"SELECT COUNT(*) FROM payment_intents WHERE status = 'succeeded'": 2 * n,
	} {
		got, err := count(q)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%s: %d, want %d", q, got, want)
		}
	}
	if err := ledger.Verify(ctx, m.DB); err != nil {
		return err
	}
	return nil
}
