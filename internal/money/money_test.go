package money

import (
	"math"
	"testing"

	"github.com/payd/payd/internal/errs"
)

func TestExponents(t *testing.T) {
	for code, want := range map[string]int{"DJF": 0, "ETB": 2, "USD": 2, "IQD": 3, "JPY": 0, "KWD": 3} {
		got, err := Exponent(code)
		if err != nil || got != want {
			t.Errorf("Exponent(%s) = %d, %v; want %d", code, got, err, want)
		}
	}
	for _, bad := range []string{"", "usd", "XXXX", "ZZZ"} {
		if _, err := Exponent(bad); err == nil {
			t.Errorf("Exponent(%q) accepted", bad)
		}
	}
}

func TestMajorToMinor(t *testing.T) {
	cases := []struct {
		major int64
		code  string
		want  int64
		err   error
	}{
		{500, "DJF", 500, nil},
		{12, "USD", 1200, nil},
		{7, "IQD", 7000, nil},
		{math.MaxInt64 / 10, "USD", 0, ErrOverflow},
		{math.MaxInt64, "DJF", math.MaxInt64, nil},
	}
	for _, c := range cases {
		got, err := MajorToMinor(c.major, c.code)
		if err != c.err || got != c.want {
			t.Errorf("MajorToMinor(%d,%s) = %d,%v want %d,%v", c.major, c.code, got, err, c.want, c.err)
		}
	}
}

func TestAdd(t *testing.T) {
	if _, err := Add(math.MaxInt64, 1); err != ErrOverflow {
		t.Fatal("overflow not detected")
	}
	if _, err := Add(math.MinInt64, -1); err != ErrOverflow {
		t.Fatal("underflow not detected")
	}
	if s, err := Sum(1, 2, 3); err != nil || s != 6 {
		t.Fatal(s, err)
	}
}

func TestPercent(t *testing.T) {
	for _, c := range [][3]int64{{1000, 80, 800}, {999, 80, 799}, {1, 80, 0}, {math.MaxInt64, 80, 7378697629483820645}} {
		if got := Percent(c[0], c[1]); got != c[2] {
			t.Errorf("Percent(%d,%d)=%d want %d", c[0], c[1], got, c[2])
		}
	}
}

func TestOneAmount(t *testing.T) {
	five, six := int64(5), int64(6)
	if v, f, err := OneAmount(&five, nil); err != nil || *v != 5 || f != "amount" {
		t.Fatalf("amount: %v %q %v", v, f, err)
	}
	if v, f, err := OneAmount(nil, &six); err != nil || *v != 6 || f != "amount_minor" {
		t.Fatalf("amount_minor: %v %q %v", v, f, err)
	}
	if v, f, err := OneAmount(nil, nil); err != nil || v != nil || f != "amount" {
		t.Fatalf("neither: %v %q %v", v, f, err)
	}
	if _, _, err := OneAmount(&five, &five); err == nil || errs.As(err).Param != "amount_minor" {
		t.Fatalf("both: %v", err)
	}
}
