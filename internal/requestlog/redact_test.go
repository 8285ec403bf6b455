package requestlog

import (
	"strings"
	"testing"
)

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
	f.Fuzz(func(t *testing.T, p string) {
		got := RedactPath(p)
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
