package refunds_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/refunds"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// BenchmarkRefundCreate measures refunds.Service.Create without HTTP on each
// engine: a sandbox refund of 1 DJF on one of 64 succeeded bank_a payments of
// one merchant, which reserves and settles it at once (the guarded intent
// update, the refund row, two events, the refund and refund_settlement
// postings, one transaction). "serial" runs one create at a time; "16
// clients" runs 16 goroutines, as bench/refunds does over HTTP.
//
//	go test -run XXX -bench RefundCreate ./internal/refunds/
func BenchmarkRefundCreate(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			e := apptest.Start(b, eng)
			intents := make([]string, 64)
			for i := range intents {
				intents[i] = bankPayment(b, e, e.SK, 100_000)
			}
			svc := e.Main.Refunds()
			p := auth.Principal{ID: "key_bench", MerchantID: e.Merchant.MerchantID}
			ctx := context.Background()
			one := int64(1)
			var n atomic.Int64
			create := func(b *testing.B) {
				i := n.Add(1)
				r, err := svc.Create(ctx, store.NoClaim, p, refunds.CreateParams{PaymentIntent: intents[i%int64(len(intents))], AmountMinor: &one})
				if err != nil {
					b.Fatal(err)
				}
				if r.Status != "succeeded" {
					b.Fatalf("refund %s is %s", r.ID, r.Status)
				}
			}
			b.Run("serial", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					create(b)
				}
			})
			b.Run("16 clients", func(b *testing.B) {
				b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						create(b)
					}
				})
			})
		})
	}
}
