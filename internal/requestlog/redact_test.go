package requestlog

import (
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The reference the one-pass redaction is checked against: the plain
// reading of the rule, a regular expression for the runs and every window of
// 13 to 19 digits checked on its own.

// digitRun matches runs of at least 13 digits, allowing one space or dash
// between digit groups (a card number as it is often written).
var digitRun = regexp.MustCompile(`[0-9](?:[ -]?[0-9]){12,}`)

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

// referenceRedactPANs is redactPANs as the reference reads it.
func referenceRedactPANs(p string) string {
	return digitRun.ReplaceAllStringFunc(p, func(m string) string {
		if holdsPAN(strings.NewReplacer(" ", "", "-", "").Replace(m)) {
			return redactedPAN
		}
		return m
	})
}

// TestRedactPath: key-shaped strings lose everything after their prefix,
// Luhn-valid runs of 13 to 19 digits (also written in groups) are replaced
// whole, and nothing else in a path changes.
func TestRedactPath(t *testing.T) {
	const key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	cases := []struct{ in, want string }{
		{"/v1/payment_intents/pi_01J0ABCDEF", "/v1/payment_intents/pi_01J0ABCDEF"},
		{"/v1/payouts/" + key, "/v1/payouts/sk_live_[redacted]"},
		{"/v1/payouts/pi_" + key + "/x", "/v1/payouts/pi_sk_live_[redacted]/x"},
		{"/v1/a/SK_TEST_abc123/pk_live_zz/rk_test_q/whsec_ABCdef", "/v1/a/SK_TEST_[redacted]/pk_live_[redacted]/rk_test_[redacted]/whsec_[redacted]"},
		{"/v1/cards/4242424242424242", "/v1/cards/[redacted-pan]"},
		{"/v1/cards/4242 4242 4242 4242/x", "/v1/cards/[redacted-pan]/x"},
		{"/v1/cards/4242-4242-4242-4242", "/v1/cards/[redacted-pan]"},
		{"/v1/cards/378282246310005", "/v1/cards/[redacted-pan]"},    // 15 digits
		{"/v1/cards/6011000990139424", "/v1/cards/[redacted-pan]"},   // 16
		{"/v1/cards/4222222222222", "/v1/cards/[redacted-pan]"},      // 13
		{"/v1/cards/4242424242424241", "/v1/cards/4242424242424241"}, // fails Luhn
		{"/v1/cards/424242424242", "/v1/cards/424242424242"},         // 12 digits, Luhn-valid
		{"/v1/x/99994242424242424242", "/v1/x/[redacted-pan]"},       // a PAN inside a longer run
		{"/v1/balance_history/2026", "/v1/balance_history/2026"},
		{"/v1/x/1234567890123--4242424242424242", "/v1/x/1234567890123--[redacted-pan]"}, // two separators end a run
		{"/v1/x/4242424242424242-", "/v1/x/[redacted-pan]-"},
		{"/v1/x/" + strings.Repeat("1", 4000) + "4242424242424242" + strings.Repeat("1", 4000), "/v1/x/[redacted-pan]"},
		{"/v1/x/" + strings.Repeat("1", 8000), "/v1/x/" + strings.Repeat("1", 8000)}, // long, no valid window
	}
	for _, c := range cases {
		if got := RedactPath(c.in); got != c.want {
			t.Errorf("RedactPath(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := RedactPath(RedactPath(c.in)); got != c.want {
			t.Errorf("RedactPath twice (%q) = %q", c.in, got)
		}
	}
}

// FuzzRedactPath: whatever the path, no Luhn-valid 13–19 digit run and no
// key-shaped secret is left in what RedactPath returns.
func FuzzRedactPath(f *testing.F) {
	f.Add("/v1/payouts/sk_live_abcdef12345678")
	f.Add("/v1/x/4242424242424242")
	f.Add("/v1/x/4242 4242 4242 4242")
	f.Add("/v1/x/1-2-3-4-5-6-7-8-9-0-1-2-3-4242")
	f.Add("/v1/x/" + strings.Repeat("9", 300))
	f.Fuzz(func(t *testing.T, p string) {
		got := RedactPath(p)
		if want := referenceRedactPANs(keyPattern.ReplaceAllStringFunc(p, func(m string) string {
			return m[:strings.LastIndexByte(m, '_')+1] + redactedKey
		})); got != want {
			t.Fatalf("RedactPath(%q) = %q, the reference gives %q", p, got, want)
		}
		if m := keyPattern.FindString(got); m != "" {
			t.Fatalf("a key survives in %q: %q", got, m)
		}
		for _, m := range digitRun.FindAllString(got, -1) {
			d := strings.NewReplacer(" ", "", "-", "").Replace(m)
			if holdsPAN(d) {
				t.Fatalf("a card number survives in %q: %q", got, m)
			}
		}
	})
}

// TestRedactPANsMatchesReference: on random paths of digits, spaces, dashes
// and letters, the one-pass redaction gives what the reference gives.
func TestRedactPANsMatchesReference(t *testing.T) {
	r := rand.New(rand.NewSource(37))
	const alphabet = "0123456789012345678901234567890123456789 -a/"
	pans := []string{"4242424242424242", "378282246310005", "4222222222222", "6011000990139424"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := r.Intn(120); n > 0; n-- {
			if r.Intn(40) == 0 {
				b.WriteString(pans[r.Intn(len(pans))])
				continue
			}
			b.WriteByte(alphabet[r.Intn(len(alphabet))])
		}
		p := b.String()
		if got, want := redactPANs(p), referenceRedactPANs(p); got != want {
			t.Fatalf("redactPANs(%q) = %q, the reference gives %q", p, got, want)
		}
	}
}

// BenchmarkRedactPathLongDigits: a path of one long digit run (no card
// number in it, so every window is checked) costs time linear in its length
// with a small constant: compare ns/op of the sizes, and with the reference.
func BenchmarkRedactPathLongDigits(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 14} {
		p := "/v1/x/" + strings.Repeat("1", size)
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for i := 0; i < b.N; i++ {
				RedactPath(p)
			}
		})
		b.Run(strconv.Itoa(size)+"/reference", func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for i := 0; i < b.N; i++ {
				referenceRedactPANs(p)
			}
		})
	}
}

// TestMayHoldKeyNeverMisses: wherever the pattern finds a key, mayHoldKey
// says there may be one (it only spares the pattern paths it cannot match),
// on every spelling of the prefixes, Unicode case folds included.
func TestMayHoldKeyNeverMisses(t *testing.T) {
	prefixes := []string{"sk_test_", "SK_LIVE_", "pK_tEsT_", "rk_live_", "whsec_", "WhSeC_", "s\u212a_test_", "\u017fk_live_", "wh\u017fec_"}
	for _, pre := range prefixes {
		for _, p := range []string{"/v1/x/" + pre + "abc", pre + "1", "/pi_" + pre + "z9/x", "/v1/payment_intents/pi_01ABC/" + pre + "Q"} {
			if keyPattern.MatchString(p) && !mayHoldKey(p) {
				t.Errorf("%q: the pattern matches, mayHoldKey says no", p)
			}
		}
	}
	for _, p := range []string{"/v1/payment_intents/pi_01JABCDEF", "/v1/balance", "/v1/events/evt_1/deliveries", "/v1/tasks_x"} {
		if mayHoldKey(p) {
			t.Errorf("%q: no key can be there, but the pattern would run", p)
		}
	}
}
