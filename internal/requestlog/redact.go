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
	if mayHoldKey(p) {
		p = keyPattern.ReplaceAllStringFunc(p, func(m string) string {
			i := strings.LastIndexByte(m, '_')
			return m[:i+1] + redactedKey
		})
	}
	if !hasDigits(p, 13) {
		return p
	}
	return redactPANs(p)
}

// mayHoldKey reports whether p has an underscore that keyPattern could
// match at: one after sk, pk or rk, or after whsec, in any case. Every id
// in a path has an underscore (pi_...), so testing for one alone would run
// the pattern on every request. A path with any non-ASCII byte goes to the
// pattern: its case folding matches letters such as the Kelvin sign for k.
func mayHoldKey(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] >= 0x80 {
			return true
		}
	}
	for j := strings.IndexByte(p, '_'); j >= 0; {
		if j >= 2 && p[j-1]|0x20 == 'k' {
			if c := p[j-2] | 0x20; c == 's' || c == 'p' || c == 'r' {
				return true
			}
		}
		if j >= 5 && strings.EqualFold(p[j-5:j], "whsec") {
			return true
		}
		k := strings.IndexByte(p[j+1:], '_')
		if k < 0 {
			break
		}
		j += 1 + k
	}
	return false
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

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// redactPANs replaces every digit run of p that holds a card number by the
// mark, in one pass over p. A run is digits with at most one space or dash
// between two of them (a card number as it is often written), of at least 13
// digits; it holds a card number when it has 13 to 19 digits and passes the
// Luhn check, or is longer and 13 to 19 consecutive digits of it do, and is
// then replaced whole.
func redactPANs(p string) string {
	var b strings.Builder
	done := 0 // p[:done] is written to b (or needs no change)
	for i := 0; i < len(p); {
		if !isDigit(p[i]) {
			i++
			continue
		}
		end, pan := scanRun(p, i)
		if pan {
			if b.Len() == 0 {
				b.Grow(len(p))
			}
			b.WriteString(p[done:i])
			b.WriteString(redactedPAN)
			done = end
		}
		i = end
	}
	if done == 0 {
		return p
	}
	b.WriteString(p[done:])
	return b.String()
}

// luhnDouble is a digit's part of a Luhn sum at a doubled position.
var luhnDouble = [10]int{0, 2, 4, 6, 8, 1, 3, 5, 7, 9}

// scanRun reads the digit run starting at p[i] (a digit) and returns the
// index just after its last digit, and whether it holds a card number. Each
// digit costs a constant amount of work whatever the run's length: two
// running Luhn sums (mod 10) are kept, one doubling the digits at even
// positions of the run and one those at odd positions, with the last 20 of
// their values, so the Luhn sum of any window of 13 to 19 digits ending at
// this digit is a difference of two of them.
func scanRun(p string, i int) (end int, pan bool) {
	var hist [2][20]int // hist[k][n%20]: sum k over the run's first n digits
	var sum [2]int      // sum[0] doubles even positions, sum[1] odd ones
	n := 0
	j := i
	for {
		d := int(p[j] - '0')
		hist[0][n%20], hist[1][n%20] = sum[0], sum[1]
		sum[n%2] = (sum[n%2] + luhnDouble[d]) % 10
		sum[1-n%2] = (sum[1-n%2] + d) % 10
		n++
		if !pan && n >= 13 {
			// The window's last digit (position n-1) is not doubled, the
			// one before it is: the doubled positions have the other parity.
			k := n % 2 // parity of n, that is of position n-2, the first doubled
			for l := 13; l <= 19 && l <= n; l++ {
				if (sum[k]-hist[k][(n-l)%20]+10)%10 == 0 {
					pan = true
					break
				}
			}
		}
		j++
		switch {
		case j < len(p) && isDigit(p[j]):
		case j+1 < len(p) && (p[j] == ' ' || p[j] == '-') && isDigit(p[j+1]):
			j++
		default:
			if n <= 19 {
				// A run of 13 to 19 digits is a card number only whole.
				return j, n >= 13 && sum[n%2] == 0
			}
			return j, pan
		}
	}
}
