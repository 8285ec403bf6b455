package payments

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers/sandbox"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// BenchmarkCreate measures the create path (validation, the sandbox
// adapter, and the transaction that writes the intent and its event) on
// each engine, without HTTP:
//
//	go test -run XXX -bench Create ./internal/payments/
func BenchmarkCreate(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			e := benchEnv(b, eng)
			in := CreateParams{Amount: ptr[int64](1500), Currency: "DJF", Provider: "bank_a", CustomerMSISDN: ptr("+25377123456")}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.svc.Create(ctx, store.NoClaim, e.test, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCreateConfirm measures a create and its confirm (which adds the
// ledger credit and the succeeded event).
func BenchmarkCreateConfirm(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			e := benchEnv(b, eng)
			in := CreateParams{Amount: ptr[int64](1500), Currency: "DJF", Provider: "bank_a", CustomerMSISDN: ptr("+25377123456")}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				pi, err := e.svc.Create(ctx, store.NoClaim, e.test, in)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.svc.Confirm(ctx, store.NoClaim, e.test, pi.ID, "123456"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchEnv(b *testing.B, eng storetest.Engine) *env {
	b.Helper()
	db := storetest.Open(b, eng)
	e := newEnvTB(b, db)
	e.reg.UseSandboxPayments(sandbox.New(sandbox.Config{PublicURL: "http://127.0.0.1"}))
	return e
}

// BenchmarkHotMerchant is the hot-row check: 64 concurrent confirms of one
// merchant's intents against 64 confirms spread over 64 merchants, in
// alternating rounds. It reports the time of each round and their ratio
// (one/spread); with balances split over slots the ratio stays near 1,
// where a single balance row per account made one merchant's confirms
// queue on its row lock.
//
//	go test -run XXX -bench HotMerchant -benchtime 20x ./internal/payments/
func BenchmarkHotMerchant(b *testing.B) {
	const n = 64
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			e := benchEnv(b, eng)
			ctx := context.Background()
			box, _ := secretbox.New("")
			spread := []auth.Principal{e.test}
			for i := 1; i < n; i++ {
				m, err := merchants.NewService(e.db, box).Create(ctx, merchants.CreateParams{Name: fmt.Sprint("Bench ", i)})
				if err != nil {
					b.Fatal(err)
				}
				spread = append(spread, auth.Principal{ID: "key_test", MerchantID: m.MerchantID, Kind: auth.KindSecret})
			}
			one := make([]auth.Principal, n)
			for i := range one {
				one[i] = e.test
			}
			in := CreateParams{Amount: ptr[int64](1500), Currency: "DJF", Provider: "bank_a", CustomerMSISDN: ptr("+25377123456")}
			round := func(who []auth.Principal) time.Duration {
				ids := make([]string, n)
				for i, p := range who {
					pi, err := e.svc.Create(ctx, store.NoClaim, p, in)
					if err != nil {
						b.Fatal(err)
					}
					ids[i] = pi.ID
				}
				start := time.Now()
				var wg sync.WaitGroup
				for i, p := range who {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := e.svc.Confirm(ctx, store.NoClaim, p, ids[i], "123456"); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
				return time.Since(start)
			}
			round(spread) // every merchant's accounts exist before the clock runs
			var tOne, tSpread time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					tOne += round(one)
					tSpread += round(spread)
				} else {
					tSpread += round(spread)
					tOne += round(one)
				}
			}
			b.ReportMetric(float64(tOne.Milliseconds())/float64(b.N), "ms/one-merchant-round")
			b.ReportMetric(float64(tSpread.Milliseconds())/float64(b.N), "ms/64-merchant-round")
			b.ReportMetric(tOne.Seconds()/tSpread.Seconds(), "one/spread")
		})
	}
}
