package billing

import (
	"math/bits"
	"time"
)

// Interval is a subscription's billing unit.
type Interval string

// The billing units of a subscription.
const (
	Day   Interval = "day"
	Week  Interval = "week"
	Month Interval = "month"
	Year  Interval = "year"
)

// Valid reports whether i is one of the four units.
func (i Interval) Valid() bool { return i == Day || i == Week || i == Month || i == Year }

// maxIntervalDays bounds one period: three years, as Stripe does.
const maxIntervalDays = 3 * 366

// MaxCount is the largest interval_count allowed for a unit (one period is
// at most three years).
func (i Interval) MaxCount() int {
	switch i {
	case Day:
		return maxIntervalDays
	case Week:
		return 156
	case Month:
		return 36
	case Year:
		return 3
	}
	return 0
}

// PeriodStart returns the start of period n (n >= 0) of a subscription
// anchored at anchor that bills every count units. Periods are computed
// from the anchor, never from the previous period, so month and year
// periods keep the anchor's day of month: clamped to the month's last day
// when the month is shorter (an anchor on Jan 31 gives Feb 28 or 29, then
// Mar 31), and back to the anchor's day once the month allows it. The time
// of day is the anchor's. Days and weeks are exact multiples of 24 hours
// (all times are UTC).
func PeriodStart(anchor time.Time, unit Interval, count, n int) time.Time {
	anchor = anchor.UTC()
	k := count * n
	switch unit {
	case Day:
		return anchor.AddDate(0, 0, k)
	case Week:
		return anchor.AddDate(0, 0, 7*k)
	case Year:
		return addMonthsClamped(anchor, 12*k)
	default:
		return addMonthsClamped(anchor, k)
	}
}

// addMonthsClamped moves t by months, keeping its day of month unless the
// target month is shorter, where it takes the month's last day.
func addMonthsClamped(t time.Time, months int) time.Time {
	y, m, d := t.Date()
	total := int(m) - 1 + months
	ty := y + floorDiv(total, 12)
	tm := time.Month(total - 12*floorDiv(total, 12) + 1)
	if last := daysIn(ty, tm); d > last {
		d = last
	}
	return time.Date(ty, tm, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// daysIn is the number of days of a month.
func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// PeriodAt returns the index of the period that contains t: the largest n
// >= 0 with PeriodStart(n) <= t (0 when t is before the anchor).
func PeriodAt(anchor time.Time, unit Interval, count int, t time.Time) int {
	if !t.After(anchor) {
		return 0
	}
	// A lower estimate from the shortest length a period can have, then
	// step forward: at most a few steps for months and years.
	minLen := time.Duration(count) * 24 * time.Hour
	switch unit {
	case Week:
		minLen *= 7
	case Month:
		minLen *= 28
	case Year:
		minLen *= 365
	}
	n := int(t.Sub(anchor) / minLen)
	for n > 0 && PeriodStart(anchor, unit, count, n).After(t) {
		n--
	}
	for !PeriodStart(anchor, unit, count, n+1).After(t) {
		n++
	}
	return n
}

// Prorate returns amount × remaining / total, rounded half away from zero,
// without overflow for any int64 amount and durations of up to a few
// years in microseconds. It is the share of a period's price for the part
// of the period left (remaining) after a change.
func Prorate(amount int64, remaining, total time.Duration) int64 {
	if total <= 0 || remaining <= 0 {
		return 0
	}
	if remaining >= total {
		return amount
	}
	neg := amount < 0
	a := uint64(amount)
	if neg {
		a = uint64(-amount)
	}
	r, tt := uint64(remaining/time.Microsecond), uint64(total/time.Microsecond)
	if tt == 0 {
		return 0
	}
	q := mulDivRound(a, r, tt)
	if neg {
		return -int64(q)
	}
	return int64(q)
}

// mulDivRound returns a×b/c rounded half up, for b <= c (so the result
// fits: it is at most a).
func mulDivRound(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, rem := bits.Div64(hi, lo, c)
	if rem >= c-rem { // rem*2 >= c without overflow
		q++
	}
	return q
}
