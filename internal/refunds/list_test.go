package refunds_test

import (
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestList: filters payment_intent and status, newest first, cursor pages,
// and the list rules' 400s.
func TestList(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		type page struct {
			Object  string   `json:"object"`
			Data    []refund `json:"data"`
			HasMore bool     `json:"has_more"`
		}
		list := func(query string) page {
			t.Helper()
			r := e.Get("/v1/refunds" + query)
			want(t, r, 200, "")
			var p page
			r.JSON(t, &p)
			return p
		}
		a, b := bankPayment(t, e, e.SK, 1000), bankPayment(t, e, e.SK, 1000)
		var made []string
		for i := range 3 {
			made = append(made, createRefund(t, e, e.SK, map[string]any{"payment_intent": a, "amount_minor": 100 + i}, "").ID)
		}
		failed := createRefund(t, e, e.SK, map[string]any{"payment_intent": b, "amount_minor": 10}, "account_closed")

		all := list("?limit=100")
		if all.Object != "list" || len(all.Data) != 4 || all.HasMore || all.Data[0].ID != failed.ID || all.Data[3].ID != made[0] {
			t.Fatalf("all: %+v", all)
		}
		byIntent := list("?payment_intent=" + a)
		if len(byIntent.Data) != 3 || byIntent.Data[0].ID != made[2] {
			t.Fatalf("by intent: %+v", byIntent)
		}
		if p := list("?status=failed"); len(p.Data) != 1 || p.Data[0].ID != failed.ID {
			t.Fatalf("by status: %+v", p)
		}
		if p := list("?status=succeeded&payment_intent=" + b); len(p.Data) != 0 {
			t.Fatalf("both filters: %+v", p)
		}
		first := list("?limit=2&payment_intent=" + a)
		if len(first.Data) != 2 || !first.HasMore || first.Data[0].ID != made[2] {
			t.Fatalf("first page: %+v", first)
		}
		second := list("?limit=2&payment_intent=" + a + "&starting_after=" + first.Data[1].ID)
		if len(second.Data) != 1 || second.HasMore || second.Data[0].ID != made[0] {
			t.Fatalf("second page: %+v", second)
		}
		back := list("?limit=2&payment_intent=" + a + "&ending_before=" + made[0])
		if len(back.Data) != 2 || back.Data[0].ID != made[2] || back.Data[1].ID != made[1] {
			t.Fatalf("ending_before: %+v", back)
		}
		want(t, e.Get("/v1/refunds?status=done"), 400, "parameter_invalid")
		r := e.Get("/v1/refunds?limit=101")
		if r.Status != 400 {
			t.Fatalf("limit 101: %d", r.Status)
		}
		want(t, e.Get("/v1/refunds/re_nothere"), 404, "resource_missing")
	})
}
