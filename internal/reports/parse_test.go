package reports

import (
	"net/url"
	"testing"
	"time"

	"github.com/payd/payd/internal/errs"
)

// TestParseSettlementQueryDayBounds: the day runs midnight to midnight in
// the zone, 23 or 25 hours when clocks change.
func TestParseSettlementQueryDayBounds(t *testing.T) {
	for _, c := range []struct {
		date, tz string
		from     string
		hours    float64
	}{
		{"2026-03-10", "", "2026-03-10T00:00:00Z", 24},
		{"2026-03-11", "Africa/Djibouti", "2026-03-10T21:00:00Z", 24},
		{"2026-03-08", "America/New_York", "2026-03-08T05:00:00Z", 23},
		{"2026-11-01", "America/New_York", "2026-11-01T04:00:00Z", 25},
		{"2026-01-01", "Asia/Kathmandu", "2025-12-31T18:15:00Z", 24},
	} {
		sp, err := ParseSettlementQuery(url.Values{"date": {c.date}, "timezone": {c.tz}})
		if err != nil {
			t.Fatalf("%s %s: %v", c.date, c.tz, err)
		}
		from, until := sp.Bounds()
		if got := from.UTC().Format(time.RFC3339); got != c.from || until.Sub(from).Hours() != c.hours {
			t.Errorf("%s in %q: from %s, %v hours; want %s, %v", c.date, c.tz, got, until.Sub(from).Hours(), c.from, c.hours)
		}
		if c.tz == "" && sp.Timezone != "UTC" {
			t.Errorf("default zone %q", sp.Timezone)
		}
	}
}

// FuzzParseSettlementQuery: any query either parses to a day of 23 to 25
// hours or fails with a 400 naming date, timezone or currency.
func FuzzParseSettlementQuery(f *testing.F) {
	f.Add("2026-03-10", "Africa/Djibouti", "DJF")
	f.Add("2026-02-30", "Local", "usd")
	f.Add("", "../etc/passwd", "")
	f.Fuzz(func(t *testing.T, date, tz, cur string) {
		sp, err := ParseSettlementQuery(url.Values{"date": {date}, "timezone": {tz}, "currency": {cur}})
		if err != nil {
			e, ok := err.(*errs.Error)
			if !ok || e.Kind != errs.KindInvalid || (e.Param != "date" && e.Param != "timezone" && e.Param != "currency") {
				t.Fatalf("error %#v", err)
			}
			return
		}
		from, until := sp.Bounds()
		if h := until.Sub(from).Hours(); h < 23 || h > 25 {
			t.Fatalf("%s in %s is %v hours", date, tz, h)
		}
	})
}

// FuzzParseListQuery: any query either parses or fails with a 400 naming a
// parameter; a parsed cursor names an entry.
func FuzzParseListQuery(f *testing.F) {
	f.Add("limit=3&type=payment&starting_after=txn_01JD0000000000000000000001")
	f.Add("created[gte]=1700000000&currency=DJF&source=pi_1")
	f.Add("ending_before=txn_zzz&type=nope")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		lp, err := ParseListQuery(q)
		if err != nil {
			e, ok := err.(*errs.Error)
			if !ok || e.Kind != errs.KindInvalid || e.Param == "" {
				t.Fatalf("error %#v", err)
			}
			return
		}
		if lp.Page.StartingAfter != "" && lp.after <= 0 || lp.Page.EndingBefore != "" && lp.before <= 0 {
			t.Fatalf("cursor without an entry: %+v", lp)
		}
	})
}
