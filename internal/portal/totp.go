package portal

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// TOTP (RFC 6238) over HOTP (RFC 4226) with HMAC-SHA-1, 30-second steps and
// six digits: what every authenticator app accepts by default.
const (
	totpStep   = 30 * time.Second
	totpDigits = 6
	// totpSkew is how many steps either side of now a code is accepted: one,
	// so a code typed as it rolls over (or a phone clock 30 s off) still works.
	totpSkew = 1
)

var totpEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newTOTPSecret returns a random 160-bit key (RFC 4226 recommends 160 bits)
// in the base32 form authenticator apps take.
func newTOTPSecret() string {
	b := make([]byte, 20)
	rand.Read(b)
	return totpEncoding.EncodeToString(b)
}

// hotp is RFC 4226 section 5.3: HMAC-SHA-1 of the counter, dynamically
// truncated to 31 bits, modulo 10^digits.
func hotp(key []byte, counter uint64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	mac := hmac.New(sha1.New, key)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	bin := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	mod := uint32(1)
	for i := 0; i < totpDigits; i++ {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", totpDigits, bin%mod)
}

// totpStepAt is the RFC 6238 time step T for t (T0 = the Unix epoch).
func totpStepAt(t time.Time) int64 { return t.Unix() / int64(totpStep/time.Second) }

// totpCode returns the code for a base32 secret at time step n.
func totpCode(secret string, n int64) (string, error) {
	key, err := totpEncoding.DecodeString(strings.ToUpper(secret))
	if err != nil {
		return "", fmt.Errorf("totp secret: %w", err)
	}
	return hotp(key, uint64(n)), nil
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
