package sim

import (
	"net/http"
	"sort"
	"time"

	"github.com/payd/payd/internal/providers/protocol"
)

// settlementReport handles GET /{provider}/v1/reports/settlement?date=YYYY-MM-DD:
// every payment captured and every payout paid on that UTC day.
func (s *Sim) settlementReport(r *http.Request, a *account, _ []byte) answer {
	date := r.URL.Query().Get("date")
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return errAnswer(http.StatusBadRequest, "parameter_invalid", "date must be YYYY-MM-DD", "date")
	}
	next := day.AddDate(0, 0, 1)
	in := func(t *time.Time) bool { return t != nil && !t.Before(day) && t.Before(next) }
	rep := &protocol.SettlementReport{Object: "settlement_report", Date: date, Entries: []protocol.SettlementEntry{}}
	a.mu.Lock()
	for _, p := range a.payments {
		if p.Status == protocol.StatusSucceeded && in(p.SettledAt) {
			rep.Entries = append(rep.Entries, protocol.SettlementEntry{Type: "payment", ID: p.ID, Reference: p.Reference,
				AmountMinor: p.CapturedMinor, Currency: p.Currency, SettledAt: *p.SettledAt})
		}
	}
	for _, po := range a.payouts {
		if po.Status == protocol.PayoutSucceeded && in(po.SettledAt) {
			rep.Entries = append(rep.Entries, protocol.SettlementEntry{Type: "payout", ID: po.ID, Reference: po.Reference,
				AmountMinor: po.AmountMinor, Currency: po.Currency, SettledAt: *po.SettledAt})
		}
	}
	a.mu.Unlock()
	if s.cfg.ReportFilter != nil {
		s.cfg.ReportFilter(a.provider, rep)
	}
	sort.Slice(rep.Entries, func(i, j int) bool {
		if !rep.Entries[i].SettledAt.Equal(rep.Entries[j].SettledAt) {
			return rep.Entries[i].SettledAt.Before(rep.Entries[j].SettledAt)
		}
		return rep.Entries[i].ID < rep.Entries[j].ID
	})
	rep.Totals = Totals(rep.Entries)
	return answer{status: http.StatusOK, body: rep}
}

// Totals sums entries per currency, in currency order.
func Totals(entries []protocol.SettlementEntry) []protocol.SettlementTotal {
	by := map[string]*protocol.SettlementTotal{}
	for _, e := range entries {
		t := by[e.Currency]
		if t == nil {
			t = &protocol.SettlementTotal{Currency: e.Currency}
			by[e.Currency] = t
		}
		t.Count++
		if e.Type == "payout" {
			t.PayoutsMinor += e.AmountMinor
		} else {
			t.PaymentsMinor += e.AmountMinor
		}
	}
	out := []protocol.SettlementTotal{}
	for _, t := range by {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Currency < out[j].Currency })
	return out
}
