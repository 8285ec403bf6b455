package portal

import (
	"crypto/subtle"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// TOTP (RFC 6238) over HOTP (RFC 4226) with HMAC-SHA-1, 30-second steps and
// six digits: what every authenticator app accepts by default. The codes
// come from github.com/pquerna/otp; what payd adds is the window of one step
// either side, a constant-time comparison of every candidate, and the replay
// guard (a step at or before the last one used is refused: totpMatch).
const (
	totpStep   = 30 * time.Second
	totpDigits = 6
	// totpSkew is how many steps either side of now a code is accepted: one,
	// so a code typed as it rolls over (or a phone clock 30 s off) still works.
	totpSkew = 1
)

// totpOpts are the code's parameters for pquerna/otp.
var totpOpts = totp.ValidateOpts{Period: uint(totpStep / time.Second), Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// newTOTPSecret returns a random 160-bit key (RFC 4226 recommends 160 bits)
// in the base32 form authenticator apps take.
func newTOTPSecret() string {
	k, err := totp.Generate(totp.GenerateOpts{Issuer: "payd", AccountName: "payd", SecretSize: 20, Period: totpOpts.Period,
		Digits: totpOpts.Digits, Algorithm: totpOpts.Algorithm})
	if err != nil {
		panic("totp: " + err.Error()) // only crypto/rand failing
	}
	return k.Secret()
}

// totpStepAt is the RFC 6238 time step T for t (T0 = the Unix epoch).
func totpStepAt(t time.Time) int64 { return t.Unix() / int64(totpStep/time.Second) }

// totpCode returns the code for a base32 secret at time step n
// (pquerna/otp's RFC 6238 code at the step's first second).
func totpCode(secret string, n int64) (string, error) {
	code, err := totp.GenerateCodeCustom(strings.ToUpper(secret), time.Unix(n*int64(totpStep/time.Second), 0), totpOpts)
	if err != nil {
		return "", fmt.Errorf("totp secret: %w", err)
	}
	return code, nil
}

// totpMatch checks code against the steps around now and returns the step
// it matched. Steps at or before lastStep are refused, so a code (or an
// older one from the window) can never be replayed.
func totpMatch(secret, code string, now time.Time, lastStep int64) (int64, bool) {
	code = strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, code)
	if len(code) != totpDigits {
		return 0, false
	}
	cur := totpStepAt(now)
	matched, found := int64(0), false
	for n := cur - totpSkew; n <= cur+totpSkew; n++ {
		want, err := totpCode(secret, n)
		if err != nil {
			return 0, false
		}
		// Every candidate is compared, matched or not, so timing says nothing
		// about which step (if any) the code belongs to.
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && n > lastStep && !found {
			matched, found = n, true
		}
	}
	return matched, found
}

// totpURI is the otpauth:// URI authenticator apps import (Key Uri Format).
func totpURI(issuer, account, secret string) string {
	label := url.PathEscape(issuer + ":" + account)
	q := url.Values{"secret": {secret}, "issuer": {issuer}, "algorithm": {"SHA1"}, "digits": {"6"}, "period": {"30"}}
	return "otpauth://totp/" + label + "?" + q.Encode()
}
