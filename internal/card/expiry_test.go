package card

import (
	"testing"
	"time"
)

func TestExpiredAt(t *testing.T) {
	exp := Expiry{Year: 2028, Month: time.February}
	djibouti := time.FixedZone("EAT", 3*3600)
	tests := []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2028, 1, 31, 23, 59, 59, 0, time.UTC), false},
		{time.Date(2028, 2, 1, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2028, 2, 29, 23, 59, 59, 999, time.UTC), false}, // valid through the end of the month
		{time.Date(2028, 3, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2027, 12, 31, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2028, 3, 1, 0, 30, 0, 0, djibouti), true},    // already March where the terminal is
		{time.Date(2028, 2, 29, 23, 30, 0, 0, djibouti), false}, // still February there
	}
	for _, tt := range tests {
		if got := exp.ExpiredAt(tt.at); got != tt.want {
			t.Errorf("ExpiredAt(%s) = %v, want %v", tt.at, got, tt.want)
		}
	}
	if exp.String() != "2028-02" || exp.lastDay() != 29 {
		t.Errorf("String %s, lastDay %d", exp, exp.lastDay())
	}
}
