package refunds_test

import (
	"fmt"
	"testing"
	"time"

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
// decided one after the other under the settings row's lock, over the
// merchant's window, so no more than the threshold goes through.
func TestFourEyesCumulativeRace(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		want(t, e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 5000}), 200, "")
		pi := bankPayment(t, e, e.SK, 25000)
		// A window of two hours, and a refund of 5000 three hours ago: it is
		// outside the window (under the default 24 h none below would pass),
		// so the locked decision must read the merchant's window.
		want(t, post(e, e.SK, "/v1/settings/changes/"+changeShorter(t, e, 7200)+"/approve", nil, ""), 200, "")
		e.Main.DB.SetClock(func() time.Time { return time.Now().UTC().Add(-3 * time.Hour) })
		if re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 5000}, ""); re.Status != "succeeded" {
			t.Fatalf("earlier refund: %+v", re)
		}
		e.Main.DB.SetClock(func() time.Time { return time.Now().UTC() })
		statuses := apptest.Concurrently(8, 0, func(int) string {
			r := post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi, "amount_minor": 2000}, "")
			if r.Status != 201 {
				return fmt.Sprintf("%d %s", r.Status, r.Body)
			}
			var re refund
			r.JSON(t, &re)
			return re.Status
		})
		if through, _ := apptest.TallyApproval(t, statuses, "succeeded", "pending"); through != 2 {
			t.Fatalf("%d refunds of 2000 went through without approval, want 2 (threshold 5000): %v", through, statuses)
		}
		verifyLedger(t, e)
	})
}

// TestFourEyesWindow (issue 37, item 5): the sum covers the merchant's
// window only. A refund made before the window does not count; one made
// within it does; the same gap under the default window of 24 hours counts.
func TestFourEyesWindow(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		at := func(d time.Duration) { e.Main.DB.SetClock(func() time.Time { return time.Now().UTC().Add(d) }) }
		want(t, e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 5000}), 200, "")
		pi := bankPayment(t, e, e.SK, 20000)
		pi2 := bankPayment(t, e, e.SK2, 20000)
		// Default window (24 h): 4500 three hours ago still counts.
		at(-3 * time.Hour)
		if re := createRefund(t, e, e.SK2, map[string]any{"payment_intent": pi2, "amount_minor": 4500}, ""); re.Status != "succeeded" {
			t.Fatalf("SK2 first: %+v", re)
		}
		at(0)
		if re := createRefund(t, e, e.SK2, map[string]any{"payment_intent": pi2, "amount_minor": 1000}, ""); re.Status != "requires_approval" {
			t.Fatalf("under the default window, 4500 three hours ago + 1000 passed 5000: %+v", re)
		}
		// A window of two hours: 4500 three hours ago is outside it.
		want(t, post(e, e.SK, "/v1/settings/changes/"+changeShorter(t, e, 7200)+"/approve", nil, ""), 200, "")
		at(-3 * time.Hour)
		if re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 4500}, ""); re.Status != "succeeded" {
			t.Fatalf("first: %+v", re)
		}
		at(0)
		if re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 4500}, ""); re.Status != "succeeded" {
			t.Fatalf("4500 outside the two-hour window still counted: %+v", re)
		}
		// Within the window the sum holds: 4500 now + 1000 passes 5000.
		if re := createRefund(t, e, e.SK, map[string]any{"payment_intent": pi, "amount_minor": 1000}, ""); re.Status != "requires_approval" {
			t.Fatalf("4500 + 1000 within the window went through: %+v", re)
		}
		verifyLedger(t, e)
	})
}

// changeShorter asks with SK2 for a shorter window (a loosening: pending)
// and returns the change's id, for SK to approve.
func changeShorter(t *testing.T, e *apptest.Env, seconds int64) string {
	t.Helper()
	r := post(e, e.SK2, "/v1/settings", map[string]any{"approval_window_seconds": seconds}, "")
	want(t, r, 202, "")
	var c struct {
		ID string `json:"id"`
	}
	r.JSON(t, &c)
	return c.ID
}
