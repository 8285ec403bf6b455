package requestlog

import (
	"regexp"
	"strings"
)

// keyPattern matches anything shaped like a payd secret: secret,
// publishable and restricted API keys of either mode and webhook signing
// secrets, whatever follows their prefix.
// No word boundary is required before the prefix: in a path the key may
// follow an underscore (pi_sk_live_...), which is a word character.
var keyPattern = regexp.MustCompile(`(?i)(?:sk|pk|rk)_(?:test|live)_[0-9a-z]+|whsec_[0-9a-z]+`)

// digitRun matches runs of at least 13 digits, allowing one space or dash
// between digit groups (a card number as it is often written).
var digitRun = regexp.MustCompile(`[0-9](?:[ -]?[0-9]){12,}`)

// Redaction marks.
const (
	redactedKey = "[redacted]"
	redactedPAN = "[redacted-pan]"
)

// RedactPath removes secrets a client put in a URL path before the path is
// stored in the request log or printed in the access log: a key-shaped
// string keeps its prefix (sk_live_) and loses the rest, and a digit run
// that could be a card number (13 to 19 digits passing the Luhn check, or a
// longer run holding such a number) is replaced whole.
func RedactPath(p string) string {
	// Most paths hold neither; two cheap scans spare them the patterns.
	if strings.IndexByte(p, '_') >= 0 {
		p = keyPattern.ReplaceAllStringFunc(p, func(m string) string {
			i := strings.LastIndexByte(m, '_')
			return m[:i+1] + redactedKey
		})
	}
	if !hasDigits(p, 13) {
		return p
	}
	return digitRun.ReplaceAllStringFunc(p, func(m string) string {
		digits := strings.NewReplacer(" ", "", "-", "").Replace(m)
		if holdsPAN(digits) {
			return redactedPAN
		}
		return m
	})
}

// hasDigits reports whether p has at least n digits.
func hasDigits(p string, n int) bool {
	for i := 0; i < len(p) && n > 0; i++ {
		if p[i] >= '0' && p[i] <= '9' {
			n--
		}
	}
	return n == 0
}

// holdsPAN reports whether digits is a card number (13 to 19 digits
// passing the Luhn check) or, longer than that, holds one.
func holdsPAN(digits string) bool {
	if len(digits) <= 19 {
		return len(digits) >= 13 && luhn(digits)
	}
	for n := 13; n <= 19 && n <= len(digits); n++ {
		for i := 0; i+n <= len(digits); i++ {
			if luhn(digits[i : i+n]) {
				return true
			}
		}
	}
	return false
}

// luhn reports whether a string of ASCII digits passes the Luhn check.
func luhn(digits string) bool {
	sum, double := 0, false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum, double = sum+d, !double
	}
	return sum%10 == 0
}
