package portal_test

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestReportPages: the balance history lists and downloads the movements
// of available; the settlement page shows a day's rows in the chosen zone
// and downloads the API's CSV; a bad day or zone is shown next to its field.
func TestReportPages(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 4_000}); r.Status != 201 {
			t.Fatalf("topup: %d %s", r.Status, r.Body)
		}
		pi := newIntent(t, e, 1500, "success")
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)

		h := p.Get("/portal/test/balance_transactions")
		if h.Status != 200 {
			t.Fatalf("history: %d", h.Status)
		}
		h.Contains(t, "Balance history", pi, "payment", "topup", "DJF 1,500", "DJF 5,500", "Download CSV")
		if f := p.Get("/portal/test/balance_transactions?type=topup"); f.Status != 200 || strings.Contains(f.Body, pi) {
			t.Fatalf("type=topup shows the payment: %d", f.Status)
		}
		if bad := p.Get("/portal/test/balance_transactions?currency=dollars"); bad.Status != 400 || !strings.Contains(bad.Body, `id="f-currency-error"`) {
			t.Fatalf("bad currency: %d", bad.Status)
		}
		dl := p.Get("/portal/test/balance_transactions/export")
		recs, err := csv.NewReader(strings.NewReader(dl.Body)).ReadAll()
		if err != nil || dl.Status != 200 || len(recs) != 3 || strings.Join(recs[0], ",") != "id,created_at,type,amount_minor,currency,source,balance_after_minor" ||
			recs[1][2] != "payment" || recs[1][5] != pi || recs[1][6] != "5500" || recs[2][6] != "4000" {
			t.Fatalf("history CSV: %d %v %q", dl.Status, err, dl.Body)
		}

		today := e.Main.DB.Now().Format("2006-01-02")
		s := p.Get("/portal/test/reports/settlement?date=" + today + "&timezone=UTC")
		if s.Status != 200 {
			t.Fatalf("settlement: %d", s.Status)
		}
		s.Contains(t, "Settlement", "bank_a", "DJF 1,500", "Download CSV", `list="zones"`)
		if d := p.Get("/portal/test/reports/settlement"); d.Status != 200 || !strings.Contains(d.Body, `value="UTC"`) {
			t.Fatalf("default day and zone: %d", d.Status)
		}
		csvPage := p.Get("/portal/test/reports/settlement/export?date=" + today + "&timezone=UTC")
		if csvPage.Status != 200 || !strings.HasPrefix(csvPage.Body, "date,currency,provider,outlet_id,payments_count,gross_minor,refunds_minor,net_minor\n"+today+",DJF,bank_a,,1,1500,0,1500\n") {
			t.Fatalf("settlement CSV: %d %q", csvPage.Status, csvPage.Body)
		}
		for q, field := range map[string]string{"date=2026-02-30": "date", "date=" + today + "&timezone=Mars/Base": "timezone"} {
			if bad := p.Get("/portal/test/reports/settlement?" + q); bad.Status != 400 || !strings.Contains(bad.Body, `id="f-`+field+`-error"`) {
				t.Fatalf("%s: %d, want the error next to %s", q, bad.Status, field)
			}
		}
		if live := p.Get("/portal/live/balance_transactions"); live.Status != 200 || strings.Contains(live.Body, pi) {
			t.Fatalf("live mode shows test movements: %d", live.Status)
		}
	})
}
