package billing

import (
	"testing"
	"time"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 9, 30, 0, 0, time.UTC) }

func TestPeriodStart(t *testing.T) {
	cases := []struct {
		name   string
		anchor time.Time
		unit   Interval
		count  int
		want   []time.Time // periods 0, 1, 2, ...
	}{
		{"month end clamps and comes back (leap year)", day(2024, 1, 31), Month, 1,
			[]time.Time{day(2024, 1, 31), day(2024, 2, 29), day(2024, 3, 31), day(2024, 4, 30), day(2024, 5, 31)}},
		{"month end clamps to Feb 28", day(2023, 1, 31), Month, 1,
			[]time.Time{day(2023, 1, 31), day(2023, 2, 28), day(2023, 3, 31)}},
		{"the 30th", day(2026, 1, 30), Month, 1, []time.Time{day(2026, 1, 30), day(2026, 2, 28), day(2026, 3, 30)}},
		{"quarterly from Nov 30 across a year", day(2025, 11, 30), Month, 3,
			[]time.Time{day(2025, 11, 30), day(2026, 2, 28), day(2026, 5, 30), day(2026, 8, 30)}},
		{"year from Feb 29", day(2024, 2, 29), Year, 1,
			[]time.Time{day(2024, 2, 29), day(2025, 2, 28), day(2026, 2, 28), day(2027, 2, 28), day(2028, 2, 29)}},
		{"days", day(2026, 2, 27), Day, 1, []time.Time{day(2026, 2, 27), day(2026, 2, 28), day(2026, 3, 1)}},
		{"two weeks", day(2026, 12, 25), Week, 2, []time.Time{day(2026, 12, 25), day(2027, 1, 8), day(2027, 1, 22)}},
		{"month from December", day(2026, 12, 15), Month, 1, []time.Time{day(2026, 12, 15), day(2027, 1, 15)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for n, want := range c.want {
				if got := PeriodStart(c.anchor, c.unit, c.count, n); !got.Equal(want) {
					t.Errorf("period %d starts %s, want %s", n, got.Format(time.RFC3339), want.Format(time.RFC3339))
				}
				if got := PeriodAt(c.anchor, c.unit, c.count, want); got != n {
					t.Errorf("PeriodAt(start of %d) = %d", n, got)
				}
			}
		})
	}
}

func TestProrate(t *testing.T) {
	h := time.Hour
	cases := []struct {
		amount           int64
		remaining, total time.Duration
		want             int64
	}{
		{3000, 15 * 24 * h, 30 * 24 * h, 1500},
		{1000, 1 * h, 3 * h, 333}, // 333.33 → 333
		{1000, 2 * h, 3 * h, 667}, // 666.67 → 667
		{1, 1 * h, 2 * h, 1},      // half rounds away from zero
		{-1000, 2 * h, 3 * h, -667},
		{1000, 0, 3 * h, 0},
		{1000, 4 * h, 3 * h, 1000},
		{1<<62 + 5, 1 * h, 2 * h, 1<<61 + 3}, // no overflow in the product
	}
	for _, c := range cases {
		if got := Prorate(c.amount, c.remaining, c.total); got != c.want {
			t.Errorf("Prorate(%d, %s, %s) = %d, want %d", c.amount, c.remaining, c.total, got, c.want)
		}
	}
}

// FuzzPeriodStart checks the calculator's properties for any anchor, unit,
// count and period: periods strictly increase; month and year periods keep
// the anchor's day of month, clamped to the month's last day, and its time
// of day; PeriodAt finds the period again.
func FuzzPeriodStart(f *testing.F) {
	f.Add(int64(1706693400), uint8(2), uint8(1), uint16(1))
	f.Add(int64(1709199000), uint8(3), uint8(1), uint16(4))
	f.Add(int64(1735603200), uint8(0), uint8(7), uint16(30))
	f.Fuzz(func(t *testing.T, secs int64, u uint8, c uint8, n16 uint16) {
		units := []Interval{Day, Week, Month, Year}
		unit := units[int(u)%4]
		count := 1 + int(c)%unit.MaxCount()
		n := int(n16 % 200)
		anchor := time.Unix(946684800+secs%(100*365*86400+1), 0).UTC() // 2000 to 2100
		if secs < 0 {
			anchor = time.Unix(946684800, 0).UTC()
		}
		a, b := PeriodStart(anchor, unit, count, n), PeriodStart(anchor, unit, count, n+1)
		if !b.After(a) {
			t.Fatalf("period %d starts %s, not after period %d at %s", n+1, b, n, a)
		}
		if a.Hour() != anchor.Hour() || a.Minute() != anchor.Minute() || a.Second() != anchor.Second() {
			t.Fatalf("time of day moved: %s from %s", a, anchor)
		}
		if unit == Month || unit == Year {
			want := min(anchor.Day(), daysIn(a.Year(), a.Month()))
			if a.Day() != want {
				t.Fatalf("period %d of %s starts on day %d, want %d", n, anchor, a.Day(), want)
			}
		}
		if got := PeriodAt(anchor, unit, count, a); got != n {
			t.Fatalf("PeriodAt(%s) = %d, want %d", a, got, n)
		}
	})
}

func TestParseRetrySchedule(t *testing.T) {
	got, err := ParseRetrySchedule("1d, 3d,5d,12h")
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{24 * time.Hour, 72 * time.Hour, 120 * time.Hour, 12 * time.Hour}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	for _, bad := range []string{"1x", "-1d", "d", "5000d", "-3h"} {
		if _, err := ParseRetrySchedule(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
