package card

import (
	"fmt"
	"time"
)

// Expiry is a card's expiry month; the card is valid through its last day.
type Expiry struct {
	Year  int // four digits
	Month time.Month
}

// ExpiredAt reports whether the card has expired at t, judged by t's calendar
// date in its own location: a card expiring 2028-12 is valid until the end of
// 31 December 2028.
func (e Expiry) ExpiredAt(t time.Time) bool {
	y, m, _ := t.Date()
	return y > e.Year || (y == e.Year && m > e.Month)
}

// String returns the expiry as YYYY-MM.
func (e Expiry) String() string { return fmt.Sprintf("%04d-%02d", e.Year, int(e.Month)) }

// lastDay returns the last day of the expiry month.
func (e Expiry) lastDay() int {
	return time.Date(e.Year, e.Month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// newExpiry builds an expiry from a two-digit year and a month.
func newExpiry(yy, mm int) (Expiry, error) {
	if yy < 0 || yy > 99 || mm < 1 || mm > 12 {
		return Expiry{}, fmt.Errorf("%w: month out of range", ErrInvalidExpiry)
	}
	return Expiry{Year: 2000 + yy, Month: time.Month(mm)}, nil
}
