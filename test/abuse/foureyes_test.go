package abuse_test

import (
	"fmt"
	"testing"
	"time"

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
		statuses := apptest.Concurrently(n, 16, func(int) string {
			r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts", Key: e.SK,
				Body: map[string]any{"amount": amount, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"}})
			if r.Status != 201 {
				return fmt.Sprintf("%d %s", r.Status, r.Body)
			}
			var p struct {
				Status string `json:"status"`
			}
			r.JSON(t, &p)
			return p.Status
		})
		through, waiting := apptest.TallyApproval(t, statuses, "succeeded", "processing")
		if through*amount > 5000 || through != 5000/amount || through+waiting != n {
			t.Fatalf("%d payouts of %d went through without approval (%d waiting), want %d: the threshold is 5000",
				through, amount, waiting, 5000/amount)
		}
	})
}

// TestAbuseSplitRefundsOverTime (issue 37, item 5): one key spreads refunds
// of 2,000 over a day and a half, one an hour, to refund more than the
// threshold of 5,000 without a second person; it also asks to shorten the
// window (a loosening it cannot approve itself). Within every window of the
// merchant's length, the refunds that went through without approval never
// add up past the threshold; after the shorter window is approved by another
// key, the same holds for the shorter window.
func TestAbuseSplitRefundsOverTime(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		base := time.Now().UTC().Add(-72 * time.Hour)
		at := func(d time.Duration) { e.Main.DB.SetClock(func() time.Time { return base.Add(d) }) }
		at(0)
		if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 5000}); r.Status != 200 {
			t.Fatalf("settings %d %s", r.Status, r.Body)
		}
		pi := bankPaymentIntent(t, e, 200_000)
		n := 0
		refund := func() string {
			n++
			r := e.Do(apptest.Request{Method: "POST", Path: "/v1/refunds", Key: e.SK, Body: map[string]any{"payment_intent": pi, "amount_minor": 2000},
				Headers: map[string]string{"Idempotency-Key": fmt.Sprintf("split-%s-%d", e.Engine, n)}})
			if r.Status != 201 {
				t.Fatalf("refund: %d %s", r.Status, r.Body)
			}
			var re struct {
				Status string `json:"status"`
			}
			r.JSON(t, &re)
			return re.Status
		}
		// through[i]: the hour (from base) of each refund that went through.
		check := func(through []time.Duration, window time.Duration) {
			t.Helper()
			for _, end := range through {
				sum := 0
				for _, h := range through {
					if h >= end-window && h <= end {
						sum += 2000
					}
				}
				if sum > 5000 {
					t.Fatalf("%d went through without approval within a window of %v ending at +%v: %v", sum, window, end, through)
				}
			}
		}
		var through []time.Duration
		for h := time.Duration(0); h < 36*time.Hour; h += time.Hour {
			at(h)
			if s := refund(); s == "succeeded" || s == "pending" {
				through = append(through, h)
			} else if s != "requires_approval" {
				t.Fatalf("refund at +%v: %s", h, s)
			}
		}
		check(through, 24*time.Hour)
		if len(through) != 4 { // at +0 h and +1 h, then +25 h and +26 h
			t.Fatalf("%d of 36 hourly refunds of 2000 went through under a 24 h window, want 4: %v", len(through), through)
		}
		// The key asks for a window of one hour: pending, and it cannot
		// approve it itself; refunds meanwhile still follow 24 h.
		at(36 * time.Hour)
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/settings", Key: e.SK, Body: map[string]any{"approval_window_seconds": 3600}})
		if r.Status != 202 {
			t.Fatalf("shorten: %d %s", r.Status, r.Body)
		}
		var c struct {
			ID string `json:"id"`
		}
		r.JSON(t, &c)
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/settings/changes/" + c.ID + "/approve", Key: e.SK}); r.Status != 403 {
			t.Fatalf("self-approval of a shorter window: %d %s", r.Status, r.Body)
		}
		if s := refund(); s != "requires_approval" {
			t.Fatalf("a refund after asking (unapproved) for a shorter window: %s", s)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/settings/changes/" + c.ID + "/approve", Key: e.SK2}); r.Status != 200 {
			t.Fatalf("approve: %d %s", r.Status, r.Body)
		}
		through = nil
		for m := time.Duration(0); m < 3*time.Hour; m += 20 * time.Minute {
			at(40*time.Hour + m)
			if s := refund(); s == "succeeded" || s == "pending" {
				through = append(through, 40*time.Hour+m)
			}
		}
		check(through, time.Hour)
		if len(through) != 5 { // at +0, +20, +80, +100 and +160 minutes
			t.Fatalf("%d of nine refunds of 2000 every 20 minutes went through under a one-hour window, want 5: %v", len(through), through)
		}
	})
}

// bankPaymentIntent makes a succeeded bank_a payment of amount DJF with SK.
func bankPaymentIntent(t *testing.T, e *apptest.Env, amount int64) string {
	t.Helper()
	r := e.Post("/v1/payment_intents", map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"})
	if r.Status != 201 {
		t.Fatalf("payment intent: %d %s", r.Status, r.Body)
	}
	var in struct {
		ID string `json:"id"`
	}
	r.JSON(t, &in)
	if c := e.Post("/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": "123456"}); c.Status != 200 {
		t.Fatalf("confirm: %d %s", c.Status, c.Body)
	}
	return in.ID
}
