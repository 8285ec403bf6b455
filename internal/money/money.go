// Package money converts and adds amounts in ISO 4217 minor units, refusing
// anything that would overflow int64.
package money

import (
	"errors"
	"math"
	"strings"

	gomoney "github.com/Rhymond/go-money"
)

// ErrOverflow is returned when a sum or conversion does not fit in int64.
var ErrOverflow = errors.New("amount overflows int64")

// ErrUnknownCurrency is returned for a code that is not in ISO 4217.
var ErrUnknownCurrency = errors.New("unknown currency")

// Exponent returns the ISO 4217 minor-unit exponent of code (DJF 0, ETB 2,
// USD 2, IQD 3). The table is go-money's, which follows ISO 4217.
func Exponent(code string) (int, error) {
	if len(code) != 3 || strings.ToUpper(code) != code {
		return 0, ErrUnknownCurrency
	}
	c := gomoney.GetCurrency(code)
	if c == nil {
		return 0, ErrUnknownCurrency
	}
	return c.Fraction, nil
}

// MajorToMinor converts a whole number of major units to minor units.
func MajorToMinor(major int64, code string) (int64, error) {
	exp, err := Exponent(code)
	if err != nil {
		return 0, err
	}
	out := major
	for i := 0; i < exp; i++ {
		if out > math.MaxInt64/10 || out < math.MinInt64/10 {
			return 0, ErrOverflow
		}
		out *= 10
	}
	return out, nil
}

// Add returns a+b or ErrOverflow.
func Add(a, b int64) (int64, error) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, ErrOverflow
	}
	return s, nil
}

// Sum adds all amounts, failing on overflow.
func Sum(amounts ...int64) (int64, error) {
	var total int64
	var err error
	for _, a := range amounts {
		if total, err = Add(total, a); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// Percent returns floor(amount*pct/100) without overflow for any int64 amount.
func Percent(amount int64, pct int64) int64 {
	q, r := amount/100, amount%100
	return q*pct + r*pct/100
}
