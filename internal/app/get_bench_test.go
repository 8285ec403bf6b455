package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store/storetest"
)

// BenchmarkGetIntent measures an authenticated GET /v1/payment_intents/{id}
// through the whole API as `payd serve` runs it (log level warn, the request
// log on, rate limit off), without the socket: the key check, access log,
// metrics, request log, the intent's read and the encoding of the answer. Its
// allocations per request are the figure to watch; bench/wrk/get.sh measures
// the same request over HTTP.
//
//	go test -run X -bench GetIntent -benchmem ./internal/app/
func BenchmarkGetIntent(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			cfg := apptest.BaseConfig(b, eng)
			m := &app.Main{Config: cfg, Out: io.Discard, Logger: app.NewLogger(io.Discard, "warn")}
			if err := m.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { m.Close() })
			c, err := m.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Bench"})
			if err != nil {
				b.Fatal(err)
			}
			key := "Bearer " + c.SecretKeys[0]
			post := httptest.NewRequest("POST", "/v1/payment_intents", strings.NewReader(
				`{"amount_minor":500,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377000001"}`))
			post.Header.Set("Authorization", key)
			post.Header.Set("Idempotency-Key", "bench-get")
			post.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			m.API.ServeHTTP(w, post)
			var pi struct{ ID string }
			if err := json.Unmarshal(w.Body.Bytes(), &pi); err != nil || pi.ID == "" {
				b.Fatalf("create: %d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				rw := &discardWriter{h: http.Header{}}
				for pb.Next() {
					// As net/http serves it: a fresh request whose context
					// is cancelled when the request ends.
					req := httptest.NewRequest("GET", "/v1/payment_intents/"+pi.ID, nil)
					req.Header.Set("Authorization", key)
					ctx, cancel := context.WithCancel(req.Context())
					clear(rw.h)
					rw.status = 0
					m.API.ServeHTTP(rw, req.WithContext(ctx))
					cancel()
					if rw.status != http.StatusOK {
						b.Fatalf("status %d", rw.status)
					}
				}
			})
		})
	}
}

// discardWriter is a ResponseWriter that keeps only the status, as cheap as
// a writer can be, so the benchmark counts payd's own work.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}
