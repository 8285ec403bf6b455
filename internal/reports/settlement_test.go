package reports_test

import (
	"context"
	"encoding/csv"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/reports"
	"github.com/payd/payd/internal/store"
)

// report is the JSON settlement report.
type report struct {
	Object   string                  `json:"object"`
	Date     string                  `json:"date"`
	Timezone string                  `json:"timezone"`
	Rows     []reports.SettlementRow `json:"rows"`
}

func getReport(t testing.TB, e *apptest.Env, q url.Values) report {
	t.Helper()
	r := e.Get("/v1/reports/settlement?" + q.Encode())
	if r.Status != 200 {
		t.Fatalf("report %s: %d %s", q.Encode(), r.Status, r.Body)
	}
	var rep report
	r.JSON(t, &rep)
	return rep
}

// cardPresent records an approved card-present payment taken at outlet.
func cardPresent(t testing.TB, e *apptest.Env, amount int64, currency, outlet string) string {
	t.Helper()
	p := auth.Principal{ID: "key_test", MerchantID: e.Merchant.MerchantID, Kind: auth.KindSecret}
	pi, err := e.Main.PaymentIntents().RecordCardPresent(context.Background(), store.NoClaim, p, payments.CardPresent{AmountMinor: amount, Currency: currency,
		TerminalID: "term_1", OutletID: outlet, Brand: "visa", Last4: "4242", EntryMode: "chip", Approved: true, AuthCode: "A1",
		IdempotencyKey: idemKey()})
	if err != nil || pi.Status != payments.Succeeded {
		t.Fatalf("card-present: %+v %v", pi, err)
	}
	return pi.ID
}

// TestSettlementReport: rows per currency, provider and outlet for a
// calendar day in any time zone, JSON and formula-safe CSV, each currency
// summing to the day's payment balance transactions; bad parameters are
// 400s naming them.
func TestSettlementReport(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		late := time.Date(2026, 3, 10, 22, 30, 0, 0, time.UTC) // 01:30 on the 11th in Djibouti (UTC+3)
		e.Main.DB.SetClock(func() time.Time { return late })
		pay(t, e, 1_000)
		cardPresent(t, e, 500, "USD", "=HYPERLINK(\"x\")")
		cardPresent(t, e, 700, "USD", "shop-2")
		e.Main.DB.SetClock(func() time.Time { return late.Add(12 * time.Hour) })
		pay(t, e, 2_000)
		cardPresent(t, e, 50, "USD", "shop-2")
		topup(t, e, "DJF", 9_999) // top-ups make no rows

		utc := getReport(t, e, url.Values{"date": {"2026-03-10"}})
		if utc.Object != "settlement_report" || utc.Date != "2026-03-10" || utc.Timezone != "UTC" {
			t.Fatalf("report: %+v", utc)
		}
		want := []reports.SettlementRow{
			{Date: "2026-03-10", Currency: "DJF", Provider: "bank_a", PaymentsCount: 1, GrossMinor: 1_000, NetMinor: 1_000},
			{Date: "2026-03-10", Currency: "USD", Provider: "wallet_a", OutletID: "=HYPERLINK(\"x\")", PaymentsCount: 1, GrossMinor: 500, NetMinor: 500},
			{Date: "2026-03-10", Currency: "USD", Provider: "wallet_a", OutletID: "shop-2", PaymentsCount: 1, GrossMinor: 700, NetMinor: 700},
		}
		if !sameRows(utc.Rows, want) {
			t.Fatalf("2026-03-10 UTC rows %+v, want %+v", utc.Rows, want)
		}
		dj := getReport(t, e, url.Values{"date": {"2026-03-11"}, "timezone": {"Africa/Djibouti"}})
		want = []reports.SettlementRow{
			{Date: "2026-03-11", Currency: "DJF", Provider: "bank_a", PaymentsCount: 2, GrossMinor: 3_000, NetMinor: 3_000},
			{Date: "2026-03-11", Currency: "USD", Provider: "wallet_a", OutletID: "=HYPERLINK(\"x\")", PaymentsCount: 1, GrossMinor: 500, NetMinor: 500},
			{Date: "2026-03-11", Currency: "USD", Provider: "wallet_a", OutletID: "shop-2", PaymentsCount: 2, GrossMinor: 750, NetMinor: 750},
		}
		if dj.Timezone != "Africa/Djibouti" || !sameRows(dj.Rows, want) {
			t.Fatalf("2026-03-11 Djibouti rows %+v, want %+v", dj.Rows, want)
		}
		if usd := getReport(t, e, url.Values{"date": {"2026-03-11"}, "timezone": {"Africa/Djibouti"}, "currency": {"USD"}}); !sameRows(usd.Rows, want[1:]) {
			t.Fatalf("currency=USD rows %+v", usd.Rows)
		}
		checkReportMatchesLedger(t, e, "2026-03-10", "UTC")
		checkReportMatchesLedger(t, e, "2026-03-11", "Africa/Djibouti")
		checkReportMatchesLedger(t, e, "2026-03-11", "America/Los_Angeles")

		r := e.Do(apptest.Request{Method: "GET", Path: "/v1/reports/settlement?date=2026-03-10", Key: e.SK, Headers: map[string]string{"Accept": "text/csv"}})
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("CSV: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		recs, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		wantCSV := [][]string{
			{"date", "currency", "provider", "outlet_id", "payments_count", "gross_minor", "refunds_minor", "net_minor"},
			{"2026-03-10", "DJF", "bank_a", "", "1", "1000", "0", "1000"},
			{"2026-03-10", "USD", "wallet_a", "'=HYPERLINK(\"x\")", "1", "500", "0", "500"},
			{"2026-03-10", "USD", "wallet_a", "shop-2", "1", "700", "0", "700"},
		}
		if strings.Join(flat(recs), "|") != strings.Join(flat(wantCSV), "|") {
			t.Fatalf("CSV:\n%s", r.Body)
		}
		if !strings.HasPrefix(string(r.Body), "date,currency,provider,outlet_id,payments_count,gross_minor,refunds_minor,net_minor\n") {
			t.Fatalf("CSV header: %q", r.Body)
		}

		// An empty day, another merchant: no rows.
		if rep := getReport(t, e, url.Values{"date": {"2026-03-09"}}); len(rep.Rows) != 0 {
			t.Fatalf("empty day: %+v", rep.Rows)
		}
		other, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Other"})
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/reports/settlement?date=2026-03-10", Key: other.SecretKeys[0]}); r.Status != 200 || strings.Contains(string(r.Body), "bank_a") {
			t.Fatalf("other merchant: %d %s", r.Status, r.Body)
		}

		for _, c := range []struct{ query, param string }{
			{"", "date"},
			{"date=2026-13-01", "date"},
			{"date=10/03/2026", "date"},
			{"date=2026-03-10&timezone=Mars/Olympus_Mons", "timezone"},
			{"date=2026-03-10&timezone=Local", "timezone"},
			{"date=2026-03-10&timezone=../../etc/passwd", "timezone"},
			{"date=2026-03-10&currency=usd", "currency"},
			{"date=2026-03-10&currency=XYZ", "currency"},
		} {
			r := e.Get("/v1/reports/settlement?" + c.query)
			if r.Status != 400 || !strings.Contains(string(r.Body), `"param":"`+c.param+`"`) {
				t.Fatalf("%q: %d %s, want 400 naming %s", c.query, r.Status, r.Body, c.param)
			}
		}
	}, noWorkers)
}

// TestSettlementReportRefunds: refunds and failed refunds count against the
// intent's provider and outlet; refunds_minor is positive and net is gross
// less refunds, on the day each posting was made.
func TestSettlementReportRefunds(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		day := time.Date(2026, 5, 2, 9, 0, 0, 0, time.UTC)
		e.Main.DB.SetClock(func() time.Time { return day })
		djf := pay(t, e, 5_000)
		usd := cardPresent(t, e, 900, "USD", "kiosk")
		refundOf := map[string]string{"re_1": djf, "re_2": djf, "re_3": usd}
		refund(t, e, "re_1", "DJF", -1_200, "refund")
		refund(t, e, "re_2", "DJF", -300, "refund")
		refund(t, e, "re_2", "DJF", 300, "refund_failure")
		refund(t, e, "re_3", "USD", -900, "refund")
		svc := reports.NewService(reports.Config{DB: e.Main.DB, Payments: e.Main.PaymentIntents(),
			Refunds: func(_ context.Context, _ auth.Principal, ids []string) (map[string]string, error) {
				out := map[string]string{}
				for _, id := range ids {
					out[id] = refundOf[id]
				}
				return out, nil
			}})
		p := auth.Principal{ID: "key_test", MerchantID: e.Merchant.MerchantID}
		sp, err := reports.ParseSettlementQuery(url.Values{"date": {"2026-05-02"}})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := svc.Settlement(ctx, p, sp)
		if err != nil {
			t.Fatal(err)
		}
		want := []reports.SettlementRow{
			{Date: "2026-05-02", Currency: "DJF", Provider: "bank_a", PaymentsCount: 1, GrossMinor: 5_000, RefundsMinor: 1_200, NetMinor: 3_800},
			{Date: "2026-05-02", Currency: "USD", Provider: "wallet_a", OutletID: "kiosk", PaymentsCount: 1, GrossMinor: 900, RefundsMinor: 900, NetMinor: 0},
		}
		if !sameRows(rep.Rows, want) {
			t.Fatalf("rows %+v, want %+v", rep.Rows, want)
		}
		sums := dayMovements(t, e, sp)
		for cur, s := range netByCurrency(rep.Rows) {
			if sums[cur] != s {
				t.Fatalf("%s: rows net %d, balance transactions %d", cur, s, sums[cur])
			}
		}
		var types []string
		for _, x := range listAll(t, e, url.Values{"source": {"re_2"}}, 10) {
			types = append(types, x.Type)
		}
		if strings.Join(types, ",") != "refund_failure,refund" {
			t.Fatalf("re_2's balance transactions: %v", types)
		}
	}, noWorkers)
}

// refund posts what the refunds capability posts for a refund's creation
// (available → reserved, kind refund) or failure (back, refund_failure).
func refund(t testing.TB, e *apptest.Env, id, currency string, amount int64, kind string) {
	t.Helper()
	acct := func(k ledger.AccountKind) ledger.AccountRef {
		return ledger.AccountRef{MerchantID: e.Merchant.MerchantID, Currency: currency, Kind: k}
	}
	ctx := context.Background()
	if err := e.Main.DB.InTx(ctx, func(tx *store.Tx) error {
		_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: e.Merchant.MerchantID, Kind: kind, Reference: id,
			Entries: []ledger.Entry{{Account: acct(ledger.Available), Amount: amount}, {Account: acct(ledger.Reserved), Amount: -amount}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// dayMovements sums, per currency, the payment, refund and refund_failure
// balance transactions of the report's day, read through the list API.
func dayMovements(t testing.TB, e *apptest.Env, sp reports.SettlementParams) map[string]int64 {
	t.Helper()
	from, until := sp.Bounds()
	sums := map[string]int64{}
	for _, typ := range []string{"payment", "refund", "refund_failure"} {
		for _, x := range listAll(t, e, url.Values{"type": {typ}, "created[gte]": {from.UTC().Format(time.RFC3339)},
			"created[lt]": {until.UTC().Format(time.RFC3339)}}, 100) {
			sums[x.Currency] += x.AmountMinor
		}
	}
	return sums
}

func netByCurrency(rows []reports.SettlementRow) map[string]int64 {
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Currency] += r.NetMinor
		if r.NetMinor != r.GrossMinor-r.RefundsMinor {
			panic("net is not gross less refunds")
		}
	}
	return out
}

// checkReportMatchesLedger: the day's report, per currency, sums exactly to
// the day's payment and refund balance transactions.
func checkReportMatchesLedger(t testing.TB, e *apptest.Env, date, tz string) {
	t.Helper()
	q := url.Values{"date": {date}, "timezone": {tz}}
	rep := getReport(t, e, q)
	sp, err := reports.ParseSettlementQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	net := netByCurrency(rep.Rows)
	moves := dayMovements(t, e, sp)
	for cur := range merge(net, moves) {
		if net[cur] != moves[cur] {
			t.Fatalf("%s in %s, %s: report rows net %d, balance transactions %d", date, tz, cur, net[cur], moves[cur])
		}
	}
}

func merge(a, b map[string]int64) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func sameRows(a, b []reports.SettlementRow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func flat(recs [][]string) []string {
	var out []string
	for _, r := range recs {
		out = append(out, strings.Join(r, ","))
	}
	return out
}
