package money

import "strconv"

// Format writes an amount in minor units as a person reads it: major
// units with the currency's exponent ("1500.00 ETB", "1500 DJF").
func Format(minor int64, currency string) string {
	exp, err := Exponent(currency)
	if err != nil || exp == 0 {
		return strconv.FormatInt(minor, 10) + " " + currency
	}
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	s := strconv.FormatInt(minor, 10)
	for len(s) <= exp {
		s = "0" + s
	}
	return sign + s[:len(s)-exp] + "." + s[len(s)-exp:] + " " + currency
}
