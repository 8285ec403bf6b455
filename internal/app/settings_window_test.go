package app_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestSettingsApprovalWindow (issue 37, item 5): the cumulative rule's window
// is a setting beside the threshold, 24 hours by default. Lengthening it
// applies at once; shortening it from a key is a pending change another
// person approves, as raising the threshold is; a request that tightens one
// control and loosens the other applies the tightening at once; a field left
// out stays as it is; a window out of bounds, or null, is a 400 naming the
// field and changes nothing.
func TestSettingsApprovalWindow(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		type settings struct {
			Threshold *int64 `json:"approval_threshold_minor"`
			Window    int64  `json:"approval_window_seconds"`
		}
		get := func() settings {
			var s settings
			e.Get("/v1/settings").JSON(t, &s)
			return s
		}
		post := func(key string, body map[string]any) *apptest.Response {
			return e.Do(apptest.Request{Method: "POST", Path: "/v1/settings", Key: key, Body: body})
		}
		if s := get(); s.Threshold != nil || s.Window != 86400 {
			t.Fatalf("defaults: %+v, want no threshold and a window of 86400", s)
		}
		if r := post(e.SK, map[string]any{"approval_threshold_minor": 5000}); r.Status != 200 {
			t.Fatalf("set threshold: %d %s", r.Status, r.Body)
		}
		// Tightening: a longer window applies at once, and the threshold
		// the request leaves out stays.
		if r := post(e.SK, map[string]any{"approval_window_seconds": 172800}); r.Status != 200 {
			t.Fatalf("lengthen window: %d %s", r.Status, r.Body)
		}
		if s := get(); s.Window != 172800 || s.Threshold == nil || *s.Threshold != 5000 {
			t.Fatalf("after lengthening: %+v", s)
		}
		// Bad windows: 400 naming the field, nothing changes.
		for _, bad := range []any{3599, 2592001, 0, -1, nil, "86400", 1.5} {
			r := post(e.SK, map[string]any{"approval_window_seconds": bad, "approval_threshold_minor": 100})
			if r.Status != 400 || !bytes.Contains(r.Body, []byte(`"param":"approval_window_seconds"`)) {
				t.Fatalf("window %v: %d %s", bad, r.Status, r.Body)
			}
		}
		if s := get(); s.Window != 172800 || *s.Threshold != 5000 {
			t.Fatalf("a refused request changed the settings: %+v", s)
		}
		// Loosening: a shorter window waits for another person.
		var c struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			settings
		}
		r := post(e.SK, map[string]any{"approval_window_seconds": 3600})
		r.JSON(t, &c)
		if r.Status != 202 || c.Status != "pending" || c.Window != 3600 || c.Threshold == nil || *c.Threshold != 5000 {
			t.Fatalf("shorten window: %d %s", r.Status, r.Body)
		}
		if s := get(); s.Window != 172800 {
			t.Fatalf("a shortening applied without approval: %+v", s)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/settings/changes/" + c.ID + "/approve", Key: e.SK}); r.Status != 403 || r.ErrorCode() != "self_approval_not_allowed" {
			t.Fatalf("self-approval: %d %s", r.Status, r.Body)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/settings/changes/" + c.ID + "/approve", Key: e.SK2}); r.Status != 200 {
			t.Fatalf("approve: %d %s", r.Status, r.Body)
		}
		if s := get(); s.Window != 3600 || *s.Threshold != 5000 {
			t.Fatalf("after approval: %+v", s)
		}
		// Mixed: the lower threshold applies at once, the shorter window waits.
		if r := post(e.SK, map[string]any{"approval_window_seconds": 7200}); r.Status != 200 {
			t.Fatalf("lengthen again: %d %s", r.Status, r.Body)
		}
		r = post(e.SK, map[string]any{"approval_threshold_minor": 4000, "approval_window_seconds": 3600})
		r.JSON(t, &c)
		if r.Status != 202 || c.Window != 3600 || c.Threshold == nil || *c.Threshold != 4000 {
			t.Fatalf("mixed request: %d %s", r.Status, r.Body)
		}
		if s := get(); s.Window != 7200 || *s.Threshold != 4000 {
			t.Fatalf("mixed request: the tightening should apply at once and the loosening wait: %+v", s)
		}
		var audits int
		if err := e.Main.DB.QueryRow(ctx, "SELECT COUNT(*) FROM portal_audit WHERE merchant_id = ? AND action = 'settings.loosened' AND detail LIKE ?",
			e.Merchant.MerchantID, "%approval_window_seconds 172800 → 3600%").Scan(&audits); err != nil || audits != 1 {
			t.Fatalf("audit rows of the approved shortening: %d %v", audits, err)
		}
		// A body that names neither control changes nothing.
		if r := post(e.SK, map[string]any{}); r.Status != 200 {
			t.Fatalf("empty update: %d %s", r.Status, r.Body)
		}
		if s := get(); s.Threshold == nil || *s.Threshold != 4000 || s.Window != 7200 {
			t.Fatalf("an empty update changed the settings: %+v", s)
		}
	})
}
