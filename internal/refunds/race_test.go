package refunds_test

import (
	"sync"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
)

// TestRacingRefunds: 50 concurrent refunds never refund more than was
// captured, on either engine.
func TestRacingRefunds(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		race := func(t *testing.T, pi string, body map[string]any) (wins, refused int) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			for range 50 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := post(e, e.SK, "/v1/refunds", body, "")
					mu.Lock()
					defer mu.Unlock()
					switch {
					case r.Status == 201:
						wins++
					case r.Status == 400 && r.ErrorCode() == "amount_exceeds_refundable":
						refused++
					default:
						t.Errorf("racing refund answered %d %s", r.Status, r.Body)
					}
				}()
			}
			wg.Wait()
			return wins, refused
		}
		t.Run("full amount", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 1000)
			wins, refused := race(t, pi, map[string]any{"payment_intent": pi, "amount_minor": 1000})
			if wins != 1 || refused != 49 {
				t.Fatalf("%d won, %d refused; want 1 and 49", wins, refused)
			}
			if in := getIntent(t, e, e.SK, pi); in.AmountRefundedMinor != 1000 || !in.Refunded {
				t.Fatalf("intent %+v", in)
			}
		})
		t.Run("default amount", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 1000)
			wins, refused := race(t, pi, map[string]any{"payment_intent": pi})
			if wins != 1 || refused != 49 {
				t.Fatalf("%d won, %d refused; want 1 and 49", wins, refused)
			}
		})
		t.Run("partial amounts", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 1000)
			wins, _ := race(t, pi, map[string]any{"payment_intent": pi, "amount_minor": 30})
			// 33 × 30 = 990 fits, a 34th would not.
			if wins != 33 {
				t.Fatalf("%d partial refunds won, want 33", wins)
			}
			if in := getIntent(t, e, e.SK, pi); in.AmountRefundedMinor != 990 || in.Refunded {
				t.Fatalf("intent %+v", in)
			}
			var sum int64
			if err := e.Main.DB.QueryRow(t.Context(), "SELECT COALESCE(SUM(amount_minor), 0) FROM refunds WHERE payment_intent = ?", pi).Scan(&sum); err != nil {
				t.Fatal(err)
			}
			if sum != 990 {
				t.Fatalf("refunds sum to %d", sum)
			}
		})
		if got := balance(t, e, e.Merchant.MerchantID, "DJF", ledger.Reserved); got != 0 {
			t.Fatalf("reserved %d", got)
		}
		verifyLedger(t, e)
	})
}
