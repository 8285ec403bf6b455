package portal

import (
	"encoding/base32"
	"testing"
	"time"
)

// The RFC 6238 appendix B vectors for SHA-1 (the 8-digit codes, whose last
// six digits are the 6-digit codes).
func TestTOTPVectors(t *testing.T) {
	secret := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte("12345678901234567890"))
	cases := []struct {
		unix int64
		want string // last six digits of the RFC's eight
	}{
		{59, "287082"},
		{1111111109, "081804"},
		{1111111111, "050471"},
		{1234567890, "005924"},
		{2000000000, "279037"},
		{20000000000, "353130"},
	}
	for _, c := range cases {
		got, err := totpCode(secret, totpStepAt(time.Unix(c.unix, 0)))
		if err != nil || got != c.want {
			t.Errorf("T=%d: got %s %v, want %s", c.unix, got, err, c.want)
		}
	}
}

func TestTOTPMatchWindowAndReplay(t *testing.T) {
	secret := newTOTPSecret()
	now := time.Unix(1_700_000_015, 0)
	cur := totpStepAt(now)
	code := func(n int64) string {
		c, err := totpCode(secret, n)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, d := range []int64{-1, 0, 1} {
		if n, ok := totpMatch(secret, code(cur+d), now, 0); !ok || n != cur+d {
			t.Errorf("step %+d refused", d)
		}
	}
	for _, d := range []int64{-2, 2} {
		if _, ok := totpMatch(secret, code(cur+d), now, 0); ok {
			t.Errorf("step %+d accepted outside the ±1 window", d)
		}
	}
	if _, ok := totpMatch(secret, code(cur), now, cur); ok {
		t.Error("a code of an already used step was accepted (replay)")
	}
	if _, ok := totpMatch(secret, code(cur-1), now, cur); ok {
		t.Error("an older code was accepted after a newer one was used")
	}
	if _, ok := totpMatch(secret, "12345", now, 0); ok {
		t.Error("a five-digit code was accepted")
	}
	c := code(cur)
	if _, ok := totpMatch(secret, c[:3]+" "+c[3:], now, 0); !ok {
		t.Error("a code with a space (as apps display it) was refused")
	}
}
