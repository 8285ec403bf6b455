package apptest

import (
	"context"

	"fmt"
	"math/rand/v2"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// SeedPaymentIntents writes n test-mode payment intents of a merchant
// straight into the table (the service would take minutes for 100,000),
// spread evenly over the span that ends at now, with ids as time-ordered as
// the service's: providers and statuses vary, most succeed. One event per
// intent is written for the most recent events intents. It is for
// benchmarks and list tests that need volume, not for behaviour.
func SeedPaymentIntents(ctx context.Context, db *store.DB, merchantID string, n int, now time.Time, span time.Duration, withEvents int) error {
	provs := []struct{ name, flow, currency string }{
		{"bank_a", "otp", "DJF"}, {"bank_b", "otp", "DJF"}, {"wallet_a", "hosted_page", "USD"},
		{"wallet_c", "push", "DJF"}, {"wallet_d", "method_picker", "ETB"},
	}
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	start := now.Add(-span)
	const chunk = 2000
	for done := 0; done < n; done += chunk {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := done; i < n && i < done+chunk; i++ {
				at := start.Add(time.Duration(int64(span) / int64(n) * int64(i+1)))
				pv := provs[rng.IntN(len(provs))]
				status := "succeeded"
				switch x := rng.IntN(20); {
				case x < 2:
					status = "canceled"
				case x < 3:
					status = "requires_action"
				}
				amount := int64(100 + rng.IntN(50000))
				captured := int64(0)
				var succ, canc any
				if status == "succeeded" {
					captured, succ = amount, store.Micros(at)
				}
				if status == "canceled" {
					canc = store.Micros(at)
				}
				id := ids.At("pi_", at, uint64(i))
				if _, err := tx.Exec(ctx, `INSERT INTO payment_intents (id, merchant_id, livemode, status, amount_minor, amount_captured_minor,
					currency, provider, flow, customer_msisdn, metadata, created_at, updated_at, succeeded_at, canceled_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?)`,
					id, merchantID, false, status, amount, captured, pv.currency, pv.name, pv.flow, "77123456",
					store.Micros(at), store.Micros(at), succ, canc); err != nil {
					return fmt.Errorf("seed intent %d: %w", i, err)
				}
				if i >= n-withEvents {
					data := fmt.Sprintf(`{"id":%q,"object":"payment_intent","status":%q,"amount_minor":%d,"currency":%q}`, id, status, amount, pv.currency)
					if _, err := tx.Exec(ctx, `INSERT INTO events (id, merchant_id, livemode, type, object_type, object_id, data, created_at, dispatched_at)
						VALUES (?, ?, ?, ?, 'payment_intent', ?, ?, ?, ?)`, ids.At("evt_", at, uint64(i)), merchantID, false,
						"payment_intent."+map[bool]string{true: "succeeded", false: "created"}[status == "succeeded"], id, data,
						store.Micros(at), store.Micros(at)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return db.Analyze(ctx, "payment_intents", "events")
}
