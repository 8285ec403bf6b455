package refunds_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestFourEyesCumulative: a principal's refunds in the window add up, so
// splitting a refund over the threshold into small ones still waits for a
// second person; another principal has a sum of its own.
func TestFourEyesCumulative(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		want(t, e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 5000}), 200, "")
		t.Run("two halves", func(t *testing.T) {
			pi := bankPayment(t, e, e.SK, 9000)
			if re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 4500}, ""); re.Status != "succeeded" {
				t.Fatalf("first: %+v", re)
			}
			re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 4500}, "")
			if re.Status != "requires_approval" {
				t.Fatalf("second half went through without approval: %+v", re)
			}
			want(t, post(e, e.SK, "/v1/refunds/"+re.ID+"/approve", nil, ""), 403, "self_approval_not_allowed")
			want(t, post(e, e.SK2, "/v1/refunds/"+re.ID+"/approve", nil, ""), 200, "")
			verifyLedger(t, e)
		})
		t.Run("many small", func(t *testing.T) {
			// SK2 has its own sum (SK's refunds above do not count for it).
			pi := bankPayment(t, e, e.SK2, 10000)
			var waiting int
			for i := 0; i < 10; i++ {
				re := createRefund(t, e, e.SK2, map[string]any{"payment_intent": pi, "amount_minor": 1000}, "")
				if i < 5 && re.Status != "succeeded" {
					t.Fatalf("refund %d: %+v", i, re)
				}
				if re.Status == "requires_approval" {
					waiting++
				}
			}
			if waiting != 5 {
				t.Fatalf("%d of ten refunds of 1000 wait for approval, want 5 (threshold 5000)", waiting)
			}
			verifyLedger(t, e)
		})
	})
}

// TestFourEyesCumulativeRace: concurrent small refunds by one principal are
// decided one after the other, so no more than the threshold goes through.
func TestFourEyesCumulativeRace(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		want(t, e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 5000}), 200, "")
		pi := bankPayment(t, e, e.SK, 20000)
		const n = 8
		statuses := make([]string, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi, "amount_minor": 2000}, "")
				var re refund
				if r.Status == 201 {
					r.JSON(t, &re)
					statuses[i] = re.Status
				} else {
					statuses[i] = fmt.Sprintf("%d %s", r.Status, r.Body)
				}
			}(i)
		}
		wg.Wait()
		through := 0
		for i, s := range statuses {
			switch s {
			case "succeeded", "pending":
				through++
			case "requires_approval":
			default:
				t.Fatalf("refund %d: status %q", i, s)
			}
		}
		if through != 2 {
			t.Fatalf("%d refunds of 2000 went through without approval, want 2 (threshold 5000): %v", through, statuses)
		}
		verifyLedger(t, e)
	})
}
