package iso20022

import (
	"regexp"
	"strconv"
	"strings"
)

// Amounts are handled as decimal digit strings from the wire to int64 minor
// units; no floating point is involved anywhere.

// CurrencyExponent returns the number of minor-unit digits of an ISO 4217
// currency code: 0 for DJF (the franc has no subdivision in use), 3 for the
// dinars, 2 for codes not listed (and for unknown codes).
func CurrencyExponent(currency string) int {
	switch currency {
	case "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF",
		"UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF":
		return 0
	case "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND":
		return 3
	case "CLF", "UYW":
		return 4
	}
	return 2
}

// amountReading is a decimal converted to minor units.
type amountReading struct {
	minor    int64
	fraction string // digits below one minor unit, no trailing zeros
	issue    string // why there is no reading; minor is 0 then
}

// readMajorAmount converts an xs:decimal in major units (an ISO 20022
// amount) to minor units of currency.
func readMajorAmount(text, currency string) amountReading {
	text = strings.Trim(text, xmlSpace)
	if text == "" {
		return amountReading{issue: "amount is missing"}
	}
	if !decimalLexical.MatchString(text) {
		return amountReading{issue: "amount is not a decimal number"}
	}
	return toMinor(parseDecimalText(text), CurrencyExponent(currency))
}

// jsonNumberLiteral is the grammar of a JSON number (RFC 8259).
var jsonNumberLiteral = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// readMinorAmount converts a JSON number literal already in minor units.
// Exponents are applied exactly on the digits; one that would move the point
// more than 40 places is out of range.
func readMinorAmount(literal string) amountReading {
	if !jsonNumberLiteral.MatchString(literal) {
		return amountReading{issue: "amount_minor is not a number"}
	}
	mantissa, exp := literal, 0
	if i := strings.IndexAny(literal, "eE"); i >= 0 {
		mantissa = literal[:i]
		e, err := strconv.Atoi(strings.TrimPrefix(literal[i+1:], "+"))
		if err != nil || e > 40 || e < -40 {
			return amountReading{issue: "amount_minor is out of range"}
		}
		exp = e
	}
	d := parseDecimalText(mantissa)
	// Move the decimal point exp places: to the right for a positive exponent.
	digits := d.intDigits + d.fracDigits
	point := len(d.intDigits) + exp
	switch {
	case point <= 0:
		d.intDigits, d.fracDigits = "", strings.Repeat("0", -point)+digits
	case point >= len(digits):
		d.intDigits, d.fracDigits = digits+strings.Repeat("0", point-len(digits)), ""
	default:
		d.intDigits, d.fracDigits = digits[:point], digits[point:]
	}
	d.intDigits = strings.TrimLeft(d.intDigits, "0")
	d.fracDigits = strings.TrimRight(d.fracDigits, "0")
	if d.isZero() {
		d.negative = false
	}
	return toMinor(d, 0)
}

// toMinor scales a decimal by 10^exponent into an int64 and the leftover
// fraction.
func toMinor(d decimalText, exponent int) amountReading {
	if d.negative {
		return amountReading{issue: "amount is negative"}
	}
	frac := d.fracDigits
	var r amountReading
	if len(frac) > exponent {
		r.fraction = strings.TrimRight(frac[exponent:], "0")
		frac = frac[:exponent]
	}
	digits := strings.TrimLeft(d.intDigits+frac+strings.Repeat("0", exponent-len(frac)), "0")
	if digits == "" {
		return r
	}
	if len(digits) > 19 {
		return amountReading{issue: "amount is out of range"}
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return amountReading{issue: "amount is out of range"}
	}
	r.minor = v
	return r
}
