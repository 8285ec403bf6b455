package payouts_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
)

func cumulativePayout(e *apptest.Env, key string, amount int64) (int, string) {
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts", Key: key,
		Body: map[string]any{"amount": amount, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"}})
	if r.Status != 201 {
		return r.Status, fmt.Sprintf("%d %s", r.Status, r.Body)
	}
	var p payout
	r.JSON(e.T, &p)
	return r.Status, p.Status
}

// TestFourEyesCumulative: a principal's single payouts in the window add up,
// so splitting a payout over the threshold still waits for a second person;
// another principal has a sum of its own.
func TestFourEyesCumulative(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		topup(t, e, "DJF", 100_000)
		if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 5000}); r.Status != 200 {
			t.Fatalf("settings %d %s", r.Status, r.Body)
		}
		if _, s := cumulativePayout(e, e.SK, 4500); s != "succeeded" {
			t.Fatalf("first half: %s", s)
		}
		if _, s := cumulativePayout(e, e.SK, 4500); s != "requires_approval" {
			t.Fatalf("second half went through without approval: %s", s)
		}
		waiting := 0
		for i := 0; i < 10; i++ {
			_, s := cumulativePayout(e, e.SK2, 1000)
			switch {
			case s == "requires_approval":
				waiting++
			case s != "succeeded":
				t.Fatalf("payout %d: %s", i, s)
			case i >= 5:
				t.Fatalf("payout %d of 1000 went through: over the threshold of 5000", i)
			}
		}
		if waiting != 5 {
			t.Fatalf("%d of ten payouts of 1000 wait, want 5", waiting)
		}
		verifyLedger(t, e)
	})
}

// TestFourEyesCumulativeRace: concurrent small payouts by one principal are
// decided one after the other, so no more than the threshold goes through.
func TestFourEyesCumulativeRace(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		topup(t, e, "DJF", 100_000)
		if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 5000}); r.Status != 200 {
			t.Fatalf("settings %d %s", r.Status, r.Body)
		}
		statuses := apptest.Concurrently(8, 0, func(int) string {
			_, s := cumulativePayout(e, e.SK, 2000)
			return s
		})
		if through, _ := apptest.TallyApproval(t, statuses, "succeeded", "processing"); through != 2 {
			t.Fatalf("%d payouts of 2000 went through without approval, want 2 (threshold 5000): %v", through, statuses)
		}
		verifyLedger(t, e)
	})
}

// TestFourEyesWindow (issue 37, item 5): a principal's single payouts add up
// over the merchant's window only; a shorter window is a loosening another
// person approves.
func TestFourEyesWindow(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		topup(t, e, "DJF", 100_000)
		at := func(d time.Duration) { e.Main.DB.SetClock(func() time.Time { return time.Now().UTC().Add(d) }) }
		if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 5000}); r.Status != 200 {
			t.Fatalf("settings %d %s", r.Status, r.Body)
		}
		// Default window (24 h): 4500 three hours ago counts.
		at(-3 * time.Hour)
		if _, s := cumulativePayout(e, e.SK2, 4500); s != "succeeded" {
			t.Fatalf("SK2 first: %s", s)
		}
		at(0)
		if _, s := cumulativePayout(e, e.SK2, 1000); s != "requires_approval" {
			t.Fatalf("under the default window 4500 three hours ago + 1000 passed 5000: %s", s)
		}
		// Two hours, asked by SK2 (pending), approved by SK.
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/settings", Key: e.SK2, Body: map[string]any{"approval_window_seconds": 7200}})
		var c struct {
			ID string `json:"id"`
		}
		if r.Status != 202 {
			t.Fatalf("shorter window: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &c)
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/settings/changes/" + c.ID + "/approve", Key: e.SK}); r.Status != 200 {
			t.Fatalf("approve: %d %s", r.Status, r.Body)
		}
		at(-3 * time.Hour)
		if _, s := cumulativePayout(e, e.SK, 4500); s != "succeeded" {
			t.Fatalf("first: %s", s)
		}
		at(0)
		if _, s := cumulativePayout(e, e.SK, 4500); s != "succeeded" {
			t.Fatalf("4500 outside the two-hour window still counted: %s", s)
		}
		if _, s := cumulativePayout(e, e.SK, 1000); s != "requires_approval" {
			t.Fatalf("4500 + 1000 within the window went through: %s", s)
		}
		verifyLedger(t, e)
	})
}
