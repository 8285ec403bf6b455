package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store/storetest"
)

// BenchmarkAuthenticatedNoop measures what the HTTP core adds to a request
// before storage: request id, access log (JSON, discarded), metrics, key
// authentication (cached), rate limiter, and a handler that does nothing.
// The Quiet variant logs at warn, as the wrk benchmarks run payd: no access
// log line is written.
func BenchmarkAuthenticatedNoop(b *testing.B) { benchAuthenticatedNoop(b, slog.LevelInfo) }

func BenchmarkAuthenticatedNoopQuiet(b *testing.B) { benchAuthenticatedNoop(b, slog.LevelWarn) }

func benchAuthenticatedNoop(b *testing.B, level slog.Level) {
	db := storetest.Open(b, storetest.SQLite)
	box, _ := secretbox.New("")
	ms := merchants.NewService(db, box)
	c, err := ms.Create(context.Background(), merchants.CreateParams{Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	s := api.NewServer(api.Config{DB: db, Merchants: ms, Logger: slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: level})), RateLimit: 1e9, RateBurst: 1e9})
	s.Handle("GET /bench/noop", func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	req := httptest.NewRequest("GET", "/bench/noop", nil)
	req.Header.Set("Authorization", "Bearer "+c.SecretKeys[0])
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != http.StatusNoContent {
				b.Fatalf("status %d", w.Code)
			}
		}
	})
}
