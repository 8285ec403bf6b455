package abuse_test

import (
	"sync"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestAbuseSplitPayouts: one key floods many small payouts at once, each far
// under the approval threshold, to move more than the threshold without a
// second person. The sum of the payouts that go through without approval
// stays within the threshold; every other one waits for approval.
func TestAbuseSplitPayouts(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 1_000_000}); r.Status != 201 {
			t.Fatalf("topup: %d %s", r.Status, r.Body)
		}
		if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 5000}); r.Status != 200 {
			t.Fatalf("settings %d %s", r.Status, r.Body)
		}
		const n, amount = 60, 499
		var mu sync.Mutex
		var through, waiting int
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for i := 0; i < n; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts", Key: e.SK,
					Body: map[string]any{"amount": amount, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"}})
				if r.Status != 201 {
					t.Errorf("payout: %d %s", r.Status, r.Body)
					return
				}
				var p struct {
					Status string `json:"status"`
				}
				r.JSON(t, &p)
				mu.Lock()
				defer mu.Unlock()
				switch p.Status {
				case "requires_approval":
					waiting++
				case "succeeded", "processing":
					through++
				default:
					t.Errorf("payout status %q", p.Status)
				}
			}()
		}
		wg.Wait()
		if through*amount > 5000 || through != 5000/amount || through+waiting != n {
			t.Fatalf("%d payouts of %d went through without approval (%d waiting), want %d: the threshold is 5000",
				through, amount, waiting, 5000/amount)
		}
	})
}
