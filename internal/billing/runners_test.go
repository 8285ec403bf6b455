package billing

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/sandbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// runnerSubs is how many subscriptions the multi-process tests bill for a
// year: 1,000 (12,000 invoices), or 40 with -short and under -race (whose
// slowdown would make the year take minutes).
func runnerSubs() int {
	if raceDetector || testing.Short() {
		return 40
	}
	return 1000
}

// populate creates n monthly subscriptions on one clock, each with its own
// customer paying by wallet_c push, through the service (on PostgreSQL
// eight at a time).
func (e *env) populate(clock string, n int, amount int64) []string {
	e.t.Helper()
	out := make([]string, n)
	workers := 8
	if !e.db.Engine().ConcurrentWriters() {
		workers = 1
	}
	errc := make(chan error, workers)
	next := make(chan int)
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	for range workers {
		go func() {
			var err error
			for i := range next {
				if err != nil {
					continue
				}
				c, cerr := e.svc.CreateCustomer(context.Background(), store.NoClaim, e.p, CustomerParams{Name: ptr("Amina Said"), TestClock: &clock,
					DefaultPayment: &DefaultPayment{Provider: "wallet_c", CustomerMSISDN: ptr(goodWallet)}})
				if err = cerr; err != nil {
					continue
				}
				s, serr := e.svc.CreateSubscription(context.Background(), store.NoClaim, e.p, SubscriptionParams{Customer: c.ID, Currency: "DJF", Interval: "month",
					Items: []ItemParams{{Description: "Fibre 100", AmountMinor: ptr(amount)}}})
				if err = serr; err == nil {
					out[i] = s.ID
				}
			}
			errc <- err
		}()
	}
	for range workers {
		if err := <-errc; err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

// checkBilledOnce checks that every subscription has exactly want
// invoices, each paid once with one succeeded intent, and that the ledger
// credited each once.
func (e *env) checkBilledOnce(subs int, want int, amount int64) {
	e.t.Helper()
	if n := e.count("SELECT COUNT(*) FROM invoices"); n != subs*want {
		e.t.Errorf("%d invoices, want %d", n, subs*want)
	}
	if n := e.count("SELECT COUNT(*) FROM invoices WHERE status = 'paid' AND amount_paid = ?", amount); n != subs*want {
		e.t.Errorf("%d invoices paid, want %d", n, subs*want)
	}
	if n := e.count("SELECT COUNT(*) FROM events WHERE type = 'invoice.paid'"); n != subs*want {
		e.t.Errorf("%d invoice.paid events, want %d", n, subs*want)
	}
	if n := e.count("SELECT COUNT(*) FROM payment_intents WHERE status = 'succeeded'"); n != subs*want {
		e.t.Errorf("%d succeeded intents, want %d (an invoice charged twice?)", n, subs*want)
	}
	if got := e.available(); got != int64(subs*want)*amount {
		e.t.Errorf("available %d, want %d", got, int64(subs*want)*amount)
	}
	e.verifyLedger()
}

// TestInterruptedAdvance: an advance that stops half-way (a crash: the run
// returns after some chunks), run again, bills nothing twice. The claims
// the crash left are made again once their lease expires.
func TestInterruptedAdvance(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.svc.ChunkSize = 7
		old := Lease
		Lease = 0 // a claim left by the crash may be made again at once
		t.Cleanup(func() { Lease = old })
		start := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
		clk := e.clock(start)
		const n = 40
		e.populate(clk.ID, n, 1000)
		var steps atomic.Int64
		e.svc.failAfter = func() bool { return steps.Add(1) == 9 }
		end := start.AddDate(0, 3, 0)
		if _, err := e.svc.AdvanceClock(context.Background(), store.NoClaim, e.p, clk.ID, ClockParams{FrozenTime: ptr(end.Unix())}); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.RunAdvance(context.Background(), clk.ID); err != errStopped {
			t.Fatalf("the interrupted run: %v", err)
		}
		if got := mustClock(e, clk.ID); got.Status != ClockAdvancing {
			t.Fatalf("clock %s after a crash, want advancing", got.Status)
		}
		partial := e.count("SELECT COUNT(*) FROM invoices")
		e.svc.failAfter = nil
		if err := e.svc.RunAdvance(context.Background(), clk.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.RunAdvance(context.Background(), clk.ID); err != nil { // a third run finds nothing
			t.Fatal(err)
		}
		if got := mustClock(e, clk.ID); got.Status != ClockReady {
			t.Fatalf("clock %s after the re-run", got.Status)
		}
		t.Logf("%d invoices before the crash", partial)
		e.checkBilledOnce(n, 4, 1000)
	})
}

// TestThreeRunners: three job runners (three payd processes, each with its
// own connection pool, payment and billing services) share one database
// and the advance jobs of one test clock moved through 12 periods: every
// period is billed and paid exactly once, for runnerSubs subscriptions.
func TestThreeRunners(t *testing.T) {
	n := runnerSubs()
	url := storetest.URL(t, storetest.Postgres)
	ctx := context.Background()
	var procs []*env
	for i := range 3 {
		db, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if i == 0 {
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			procs = append(procs, newEnv(t, db))
			continue
		}
		reg := providers.NewRegistry()
		reg.UseSandboxPayments(sandbox.New(sandbox.Config{PublicURL: "http://payd.test"}))
		pay := payments.NewService(payments.Config{DB: db, Providers: reg})
		svc := NewService(Config{DB: db, Payments: pay, RetrySchedule: procs[0].svc.schedule})
		procs = append(procs, &env{t: t, db: db, svc: svc, pay: pay, p: procs[0].p})
	}
	e := procs[0]
	old := AdvanceFanout
	AdvanceFanout = 3
	t.Cleanup(func() { AdvanceFanout = old })
	start := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	clk := e.clock(start)
	e.populate(clk.ID, n, 1000)

	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, p := range procs {
		r := jobs.NewRunner(p.db, slog.New(slog.NewTextHandler(io.Discard, nil)))
		r.Poll = 10 * time.Millisecond
		r.Handle(AdvanceJob, p.svc.RunAdvanceJob)
		wg.Add(1)
		go func() { defer wg.Done(); r.Run(runCtx) }()
	}
	defer func() { stop(); wg.Wait() }()
	began := time.Now()
	for m := 0; m < 12; m++ {
		to := PeriodStart(start, Month, 1, m)
		if _, err := e.svc.AdvanceClock(ctx, store.NoClaim, e.p, clk.ID, ClockParams{FrozenTime: ptr(to.Unix())}); err != nil {
			t.Fatal(err)
		}
		for mustClock(e, clk.ID).Status != ClockReady {
			if time.Since(began) > 10*time.Minute {
				t.Fatal("the advances did not finish")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("%d subscriptions through 12 periods in %s", n, time.Since(began).Round(time.Millisecond))
	stop()
	wg.Wait()
	var runners int
	if err := e.db.QueryRow(ctx, "SELECT COUNT(DISTINCT locked_by) FROM jobs WHERE kind = ?", AdvanceJob).Scan(&runners); err == nil {
		t.Logf("advance jobs last held by %d runners", runners)
	}
	e.checkBilledOnce(n, 12, 1000)
}
