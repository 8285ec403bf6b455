package sandbox

import (
	"encoding/json"
	"strings"
)

// The sandbox test cards (CONTRACT section 3). Any other number that passes
// the Luhn check succeeds too.
const (
	CardSuccess  = "4242424242424242"
	CardDeclined = "4000000000000002"
	Card3DS      = "4000000000003220"
)

// NormalizeCardNumber drops the spaces and dashes people type between
// groups; it returns "" when anything else than digits remains or the
// length is not 12 to 19 digits.
func NormalizeCardNumber(s string) string {
	s = strings.NewReplacer(" ", "", "-", "").Replace(s)
	if len(s) < 12 || len(s) > 19 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return ""
		}
	}
	return s
}

// Luhn reports whether a string of digits passes the Luhn check.
func Luhn(digits string) bool {
	if digits == "" {
		return false
	}
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		c := digits[i]
		if c < '0' || c > '9' {
			return false
		}
		d := int(c - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// Brand names a card's network from its leading digits.
func Brand(number string) string {
	switch {
	case strings.HasPrefix(number, "4"):
		return "visa"
	case len(number) >= 2 && number[0] == '5' && number[1] >= '1' && number[1] <= '5':
		return "mastercard"
	case len(number) >= 4 && number[:4] >= "2221" && number[:4] <= "2720":
		return "mastercard"
	case strings.HasPrefix(number, "34"), strings.HasPrefix(number, "37"):
		return "amex"
	}
	return "unknown"
}

// cardDetails is the payment_method_details of a card payment: brand and
// last four digits only, never the number.
func cardDetails(number string) json.RawMessage {
	if len(number) < 4 {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"type": "card", "card": map[string]string{"brand": Brand(number), "last4": number[len(number)-4:]}})
	return b
}
