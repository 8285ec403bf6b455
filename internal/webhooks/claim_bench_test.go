package webhooks

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// BenchmarkClaim measures one claim of 32 due deliveries spread over 20
// endpoints of 4 merchants (50 waiting each), the dispatch step every
// attempt goes through, with no endpoint rate-limited. Between iterations
// the claimed deliveries are made due again (not timed).
func BenchmarkClaim(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			db := storetest.Open(b, eng)
			ctx := context.Background()
			s := New(Config{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), EndpointConcurrency: 1000, MerchantConcurrency: 1000})
			now := store.Micros(db.Now())
			err := db.InTx(ctx, func(tx *store.Tx) error {
				for e := 0; e < 20; e++ {
					epID := fmt.Sprintf("we_bench%02d", e)
					if _, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (id, merchant_id, livemode, url, enabled_events, description, status,
						secret_sealed, created_at, updated_at) VALUES (?, ?, FALSE, 'http://localhost:9/x', '["*"]', '', 'enabled', 'x', ?, ?)`,
						epID, fmt.Sprintf("m%d", e%4), now, now); err != nil {
						return err
					}
					for d := 0; d < 50; d++ {
						if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, merchant_id, livemode, event_id, endpoint_id, status,
							attempt_count, next_attempt_at, created_at, updated_at) VALUES (?, ?, FALSE, ?, ?, 'pending', 0, ?, ?, ?)`,
							fmt.Sprintf("whdel_%02d_%03d", e, d), fmt.Sprintf("m%d", e%4), fmt.Sprintf("evt_%02d_%03d", e, d), epID, now-1, now, now); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, _, err := s.claim(ctx, 32)
				if err != nil {
					b.Fatal(err)
				}
				if len(out) != 32 {
					b.Fatalf("claimed %d, want 32", len(out))
				}
				b.StopTimer()
				if err := db.InTx(ctx, func(tx *store.Tx) error {
					_, err := tx.Exec(ctx, "UPDATE webhook_deliveries SET lease = NULL, next_attempt_at = ? WHERE lease IS NOT NULL", now-1)
					return err
				}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
