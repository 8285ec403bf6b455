package portal_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/store"
)

// TestDashboardLast30Days: the dashboard draws the last 30 UTC days of
// succeeded payments per currency as an inline SVG, with today's and an
// older day's payments in their columns and nothing before the period.
func TestDashboardLast30Days(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		pay := func(amount int, key string) string {
			r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK, Headers: map[string]string{"Idempotency-Key": key},
				Body: map[string]any{"amount": amount, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"}})
			id, _ := r.Map(t)["id"].(string)
			c := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + id + "/confirm", Key: e.SK, Body: map[string]string{"otp": "123456"}})
			if c.Status != 200 {
				t.Fatalf("confirm: %d %s", c.Status, c.Body)
			}
			return id
		}
		pay(1500, "d1")
		older := pay(700, "d2")
		tooOld := pay(900, "d3")
		now := e.Main.DB.Now()
		for id, daysAgo := range map[string]int{older: 10, tooOld: 45} {
			if _, err := e.Main.DB.Exec(ctx, "UPDATE payment_intents SET created_at = ? WHERE id = ?", store.Micros(now.AddDate(0, 0, -daysAgo)), id); err != nil {
				t.Fatal(err)
			}
		}
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		body := p.Get("/portal/test/").Body
		i := strings.Index(body, `id="daily-DJF"`)
		if i < 0 {
			t.Fatalf("no 30-day DJF chart on the dashboard")
		}
		fig := body[i : i+strings.Index(body[i:], "</figure>")]
		if n := strings.Count(fig, `<g class="day">`); n != 30 {
			t.Fatalf("%d day columns", n)
		}
		today := now.UTC().Format("2 Jan 2006")
		back := now.UTC().AddDate(0, 0, -10).Format("2 Jan 2006")
		for _, want := range []string{today + ": DJF 1,500, 1 succeeded", back + ": DJF 700, 1 succeeded", "DJF 2,200 in all"} {
			if !strings.Contains(fig, want) {
				t.Errorf("the chart lacks %q", want)
			}
		}
		nonzero := regexp.MustCompile(`height="([1-9]\d*)" fill`).FindAllString(fig, -1)
		if len(nonzero) != 2 {
			t.Errorf("%d non-empty columns, want 2 (the 45-day-old payment is outside)", len(nonzero))
		}
	})
}
