package payments

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// seedIntents writes n intents of the merchant straight into the table (the
// service would take minutes for 100,000), created at the times at(i) gives,
// in the status status(i) gives: requires_action, requires_capture (an
// authorisation of a manual card intent) or succeeded. It returns the ids.
func seedIntents(tb testing.TB, db *store.DB, merchantID string, n int, at func(int) time.Time, status func(int) Status) []string {
	tb.Helper()
	ctx := context.Background()
	out := make([]string, 0, n)
	const chunk = 800 // 29 values a row: under SQLite's and PostgreSQL's limits on bound values
	for done := 0; done < n; done += chunk {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var q strings.Builder
			q.WriteString(insertIntents)
			var args []any
			for i := done; i < n && i < done+chunk; i++ {
				t := at(i)
				r := &record{Intent: Intent{ID: ids.At("pi_", t, uint64(i)), Status: status(i), AmountMinor: 1000, Currency: "USD",
					Provider: providers.WalletA, Metadata: map[string]string{"wallet_a_mode": "card"}, CreatedAt: t, MerchantID: merchantID},
					flow: providers.FlowCardPage, updatedAt: t}
				switch r.Status {
				case RequiresCapture:
					r.CaptureMethod, r.AmountCapturableMinor = CaptureManual, r.AmountMinor
				case Succeeded:
					r.AmountCapturedMinor, r.SucceededAt = r.AmountMinor, &t
				case RequiresAction:
					r.NextAction = &NextAction{Type: "redirect", RedirectURL: "http://payd.test/sandbox/pay/" + r.ID}
				}
				if i > done {
					q.WriteString(", ")
				}
				q.WriteString(insertIntentRow)
				args = append(args, insertArgs(r)...)
				out = append(out, r.ID)
			}
			_, err := tx.Exec(ctx, q.String(), args...)
			return err
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := db.Analyze(ctx, "payment_intents"); err != nil { // what autovacuum does soon after a bulk load
		tb.Fatal(err)
	}
	return out
}

// TestExpiryWithTwoRunners: two processes (two connection pools, two
// services, two job runners) share one database; the intents past their
// time are cancelled exactly once (one event each, cancellation_reason
// abandoned), the others are left, whether the job runs through the
// runners or both processes run it at the same moment.
func TestExpiryWithTwoRunners(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			url := storetest.MigratedURL(t, eng)
			ctx := context.Background()
			var svcs []*Service
			var dbs []*store.DB
			for range 2 {
				db, err := store.Open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				dbs = append(dbs, db)
				svcs = append(svcs, NewService(Config{DB: db, Providers: providers.NewRegistry(),
					Expiry: Expiry{Action: 24 * time.Hour, Capture: 168 * time.Hour}}))
			}
			e := newEnv(t, dbs[0])
			now := dbs[0].Now()
			old := ExpiryBatch
			ExpiryBatch = 7 // several batches per run
			t.Cleanup(func() { ExpiryBatch = old })

			// 0..59: requires_action, 60..89: requires_capture,
			// 90..119: succeeded; the even ones are past their time.
			const n = 120
			statusOf := func(i int) Status {
				switch {
				case i < 60:
					return RequiresAction
				case i < 90:
					return RequiresCapture
				}
				return Succeeded
			}
			atOf := func(i int) time.Time {
				window := 24 * time.Hour
				if statusOf(i) == RequiresCapture {
					window = 168 * time.Hour
				}
				if i%2 == 0 {
					return now.Add(-window - time.Duration(i+1)*time.Minute)
				}
				return now.Add(-window + time.Duration(i+1)*time.Minute)
			}
			idsOf := seedIntents(t, e.db, e.test.MerchantID, n, atOf, statusOf)

			// Both processes run the job at the same moment ...
			var wg sync.WaitGroup
			counts := make([]int, 2)
			for i, s := range svcs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := s.Expire(ctx)
					if err != nil {
						t.Error(err)
					}
					counts[i] = c
				}()
			}
			wg.Wait()
			if counts[0]+counts[1] != 45 {
				t.Fatalf("the two runs expired %v, want 45 in all", counts)
			}
			// ... and through their job runners, for a while.
			runCtx, stop := context.WithCancel(ctx)
			for i, s := range svcs {
				r := jobs.NewRunner(dbs[i], slog.New(slog.NewTextHandler(io.Discard, nil)))
				r.Poll = 5 * time.Millisecond
				r.Every(ExpiryJob, 5*time.Millisecond, s.RunExpiryJob)
				wg.Add(1)
				go func() { defer wg.Done(); r.Run(runCtx) }()
			}
			time.Sleep(300 * time.Millisecond)
			stop()
			wg.Wait()

			for i, id := range idsOf {
				r, err := loadByID(ctx, e.db, id)
				if err != nil {
					t.Fatal(err)
				}
				want := statusOf(i)
				if i%2 == 0 && want != Succeeded {
					want = Canceled
				}
				if r.Status != want {
					t.Errorf("intent %d (%s): %s, want %s", i, statusOf(i), r.Status, want)
				}
				if want == Canceled && (r.CancellationReason == nil || *r.CancellationReason != ReasonAbandoned || r.AmountCapturableMinor != 0) {
					t.Errorf("intent %d: reason %v, capturable %d", i, r.CancellationReason, r.AmountCapturableMinor)
				}
			}
			if got := storetest.Count(t, e.db, "SELECT COUNT(*) FROM events WHERE type = ?", EventCanceled); got != 45 {
				t.Fatalf("%d payment_intent.canceled events, want 45", got)
			}
			if err := ledger.Verify(ctx, e.db); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The sizes of BenchmarkExpire: small by default, so that a run of the
// package's benchmarks stays short; the size is a flag away.
var (
	expireTables   = flag.String("expire.tables", "10000,100000", "BenchmarkExpire: comma-separated table sizes (intents)")
	expireExpiring = flag.Int("expire.expiring", 1000, "BenchmarkExpire: intents due for expiry in each table")
)

// BenchmarkExpire measures one run of the expiry job that finds
// -expire.expiring intents (default 1,000) to cancel in tables of
// -expire.tables intents (default 10,000 and 100,000; 90% succeeded, the
// rest waiting but not yet due): with the partial index every size costs
// about the same per expired intent, as the job reads only what expires.
//
//	go test -run XXX -bench Expire -benchtime 3x ./internal/payments/
//	go test -run XXX -bench Expire -benchtime 1x -timeout 2h ./internal/payments/ -expire.tables 100000,1000000 -expire.expiring 10000
func BenchmarkExpire(b *testing.B) {
	var tables []int
	for _, f := range strings.Split(*expireTables, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < *expireExpiring {
			b.Fatalf("-expire.tables: %q is not a table size of at least -expire.expiring (%d)", f, *expireExpiring)
		}
		tables = append(tables, n)
	}
	expiring := *expireExpiring
	for _, eng := range storetest.Engines() {
		for _, total := range tables {
			b.Run(fmt.Sprintf("%s/table=%d/expiring=%d", eng, total, expiring), func(b *testing.B) {
				db := storetest.Open(b, eng)
				e := newEnvTB(b, db)
				e.svc.expiry = Expiry{Action: 24 * time.Hour, Capture: 168 * time.Hour}
				now := db.Now()
				status := func(i int) Status {
					if i < expiring || i%10 == 0 {
						return RequiresAction
					}
					return Succeeded
				}
				at := func(i int) time.Time {
					if i < expiring {
						return now.Add(-25*time.Hour - time.Duration(i)*time.Second)
					}
					return now.Add(-time.Duration(i) * time.Millisecond)
				}
				ids := seedIntents(b, db, e.test.MerchantID, total, at, status)[:expiring]
				ctx := context.Background()
				b.ResetTimer()
				for b.Loop() {
					n, err := e.svc.Expire(ctx)
					if err != nil || n != expiring {
						b.Fatalf("expired %d (%v)", n, err)
					}
					b.StopTimer()
					// Put the same ones back to waiting for the next run.
					for i := 0; i < len(ids); i += 500 {
						chunk := ids[i:min(i+500, len(ids))]
						args := make([]any, len(chunk))
						for j, id := range chunk {
							args[j] = id
						}
						if _, err := db.Exec(ctx, "UPDATE payment_intents SET status = 'requires_action', canceled_at = NULL, cancellation_reason = NULL WHERE id IN (?"+
							strings.Repeat(", ?", len(chunk)-1)+")", args...); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(expiring), "µs/expired")
			})
		}
	}
}

// TestFreshMigrationTakesRequiresCapture: right after migrating an empty
// database, in the same process and pool (the migration widened the status
// CHECK in place on SQLite and must have reloaded the schema on every
// connection), a requires_capture row is accepted and an unknown status is
// still refused.
func TestFreshMigrationTakesRequiresCapture(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			ctx := context.Background()
			db, err := store.Open(ctx, storetest.URL(t, eng))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, db)
			now := db.Now()
			// Several rounds, so statements land on several of the pool's
			// connections, the migration's own included.
			for round := range 4 {
				seedIntents(t, db, e.test.MerchantID, 3, func(i int) time.Time { return now.Add(time.Duration(round*10+i) * time.Second) },
					func(int) Status { return RequiresCapture })
			}
			if n := storetest.Count(t, db, "SELECT COUNT(*) FROM payment_intents WHERE status = 'requires_capture'"); n != 12 {
				t.Fatalf("%d requires_capture rows", n)
			}
			if _, err := db.Exec(ctx, "UPDATE payment_intents SET status = 'authorised' WHERE merchant_id = ?", e.test.MerchantID); err == nil {
				t.Fatal("the status CHECK let an unknown status through")
			}
		})
	}
}
