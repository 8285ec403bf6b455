package portal_test

import (
	"context"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/store/storetest"
)

// BenchmarkPages renders portal pages over HTTP (loopback, a signed-in
// session, the whole middleware) with 100,000 payment intents in the
// database, spread over 90 days, and reports the latency percentiles of each
// page. The target is p95 under 50 ms. Run:
//
//	PAYD_TEST_DATABASE_URL=... go test -run '^$' -bench Pages -benchtime 200x ./internal/portal/
func BenchmarkPages(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			e := apptest.Start(b, eng)
			ctx := context.Background()
			now := e.Main.DB.Now()
			if err := apptest.SeedPaymentIntents(ctx, e.Main.DB, e.Merchant.MerchantID, 100_000, now, 90*24*time.Hour, 1000); err != nil {
				b.Fatal(err)
			}
			var mid string
			if err := e.Main.DB.QueryRow(ctx, "SELECT id FROM payment_intents ORDER BY id LIMIT 1 OFFSET 50000").Scan(&mid); err != nil {
				b.Fatal(err)
			}
			p := e.NewPortal()
			p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
			day := now.AddDate(0, 0, -30).Format("2006-01-02")
			pages := []struct{ name, path string }{
				{"dashboard", "/portal/test/"},
				{"intents", "/portal/test/payment_intents"},
				{"intents_deep_cursor", "/portal/test/payment_intents?starting_after=" + mid},
				{"intents_status_provider", "/portal/test/payment_intents?status=canceled&provider=wallet_a"},
				{"intents_one_day", "/portal/test/payment_intents?from=" + day + "&to=" + day},
				{"intent", "/portal/test/payment_intents/" + mid},
				{"events", "/portal/test/events"},
			}
			for _, pg := range pages {
				b.Run(pg.name, func(b *testing.B) {
					lat := make([]time.Duration, 0, 256)
					for b.Loop() {
						t := time.Now()
						r := p.Get(pg.path)
						lat = append(lat, time.Since(t))
						if r.Status != http.StatusOK {
							b.Fatalf("%s: %d", pg.path, r.Status)
						}
					}
					sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
					at := func(q float64) float64 {
						return float64(lat[min(len(lat)-1, int(float64(len(lat))*q))].Microseconds()) / 1000
					}
					b.ReportMetric(at(0.50), "p50-ms")
					b.ReportMetric(at(0.95), "p95-ms")
					b.ReportMetric(at(0.99), "p99-ms")
				})
			}
		})
	}
}
