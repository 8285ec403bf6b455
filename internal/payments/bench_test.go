package payments

import (
	"context"
	"testing"

	"github.com/payd/payd/internal/providers/sandbox"
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
				if _, err := e.svc.Create(ctx, e.test, in); err != nil {
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
				pi, err := e.svc.Create(ctx, e.test, in)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.svc.Confirm(ctx, e.test, pi.ID, "123456"); err != nil {
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
